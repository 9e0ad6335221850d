// Load shedding (src/features/shedding/load-shedding.ts) in a real service process, its signal forced
// with a tiny threshold: one request waiting on a SQLite write lock that another connection holds.
// New requests are then turned away with 503 and a jittered Retry-After in the active format,
// before any work; the health checks and /metrics never are; the metric counts the shed. The
// waiting request meets its deadline meanwhile: that 504 is checked in each format too.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { ConfigError, readConfig } from '../../src/config.js';
import { settingsOf } from '../../src/features/feature.js';
import { shedding } from '../../src/features/shedding/feature.js';
import { LoadShedder, nextShedShare } from '../../src/features/shedding/load-shedding.js';
import { send, type RawResponse } from '../support/http.js';
import { startServiceProcess } from '../support/service-process.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

const DEADLINE_MS = 1_000;
const SHED_MESSAGE = 'The service is overloaded; retry after the Retry-After seconds';
const DEADLINE_MESSAGE =
  'The request was not answered within the time the service allows it; it may still take effect';

/** The body each format gives an error of our own with this code and message. */
const BODIES: Record<
  string,
  (status: number, code: string, title: string, message: string) => unknown
> = {
  default: (_status, code, _title, message) => ({ detail: { code, message } }),
  unified: (_status, code, _title, message) => ({ error: { code, message } }),
  problem: (status, code, title, message) => ({
    type: `/docs/problems#${code.toLowerCase().replaceAll('_', '-')}`,
    title,
    status,
    detail: message,
    code,
  }),
};
const CONTENT_TYPES: Record<string, string> = {
  default: 'application/json',
  unified: 'application/json',
  problem: 'application/problem+json',
};

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function assertAnswer(
  res: RawResponse,
  format: string,
  status: number,
  code: string,
  title: string,
  message: string,
): void {
  assert.equal(res.status, status, `${format}: ${res.text}`);
  assert.equal(res.headers['content-type'], CONTENT_TYPES[format]);
  assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  assert.deepEqual(JSON.parse(res.text), BODIES[format]?.(status, code, title, message));
}

/**
 * The to-do service on a SQLite file, with `args`, and a connection of the test's own on the same
 * file that takes the write lock when the test says (busy_timeout 0: it never waits itself).
 */
async function withLockHolder(
  args: readonly string[],
  body: (url: string, holder: Database.Database) => Promise<void>,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'shedding-'));
  const file = join(dir, 'todo.sqlite');
  const service = await startServiceProcess(['todo', '--db', `sqlite:${file}`, ...args]);
  const holder = new Database(file);
  try {
    holder.pragma('busy_timeout = 0');
    await body(service.urls[0] as string, holder);
  } finally {
    if (holder.inTransaction) holder.exec('ROLLBACK');
    holder.close();
    await service.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('load shedding', { timeout: SUITE_TIMEOUT_MS }, () => {
  for (const format of ['default', 'unified', 'problem']) {
    test(`past the signal, a new request is answered 503 with a Retry-After of 1 to 3 s before any work (${format} format); the health checks and /metrics never are`, async () => {
      await withLockHolder(
        ['--errors', format, '--shed-waiting', '1', '--deadline-ms', String(DEADLINE_MS)],
        async (url, holder) => {
          holder.exec('BEGIN IMMEDIATE');
          const waiting = send(url, { method: 'DELETE', path: '/todos/1' });
          await sleep(200);

          const afters = new Set<string>();
          for (let k = 0; k < 12; k++) {
            const shed = await send(url, { method: 'GET', path: '/todos/1' });
            assertAnswer(shed, format, 503, 'OVERLOADED', 'Overloaded', SHED_MESSAGE);
            afters.add(String(shed.headers['retry-after']));
          }
          assert.ok(
            [...afters].every((after) => ['1', '2', '3'].includes(after)),
            [...afters].join(),
          );
          assert.ok(
            afters.size > 1,
            `Retry-After varies from answer to answer: ${[...afters].join()}`,
          );
          const shedWrite = await send(url, {
            method: 'POST',
            path: '/todos',
            headers: [['Content-Type', 'application/json']],
            body: '{"title":"not now"}',
          });
          assertAnswer(shedWrite, format, 503, 'OVERLOADED', 'Overloaded', SHED_MESSAGE);

          for (const path of ['/healthz', '/readyz', '/metrics'])
            assert.equal((await send(url, { method: 'GET', path })).status, 200, path);
          const metrics = (await send(url, { method: 'GET', path: '/metrics' })).text;
          assert.match(
            metrics,
            /^http_requests_shed_total\{service="todo",signal="waiting"\} 13$/m,
          );

          assertAnswer(
            await waiting,
            format,
            504,
            'DEADLINE_EXCEEDED',
            'Deadline exceeded',
            DEADLINE_MESSAGE,
          );
          holder.exec('ROLLBACK');
          // Nothing waits any more: requests are admitted again, and the shed write never ran.
          let after: RawResponse;
          do after = await send(url, { method: 'GET', path: '/todos/1' });
          while (after.status === 503);
          assert.equal(after.status, 404, 'the started delete finished once the lock was gone');
          assert.deepEqual(holder.prepare('SELECT count(*) AS n FROM todos').get(), { n: 0 });
        },
      );
    });
  }

  test("a request that is shed spends none of its client's rate limit: once admitted again, the whole burst is left", async () => {
    // A burst of 3 reads, and then one in 1,000 s: nothing comes back during the test.
    await withLockHolder(
      ['--shed-waiting', '1', '--rate-limit', 'reads=0.001/s:3'],
      async (url, holder) => {
        const read = (path: string): Promise<RawResponse> => send(url, { method: 'GET', path });
        holder.exec('BEGIN IMMEDIATE');
        const waiting = send(url, {
          method: 'POST',
          path: '/todos',
          headers: [['Content-Type', 'application/json']],
          body: '{"title":"waits for the lock"}',
        });
        // The document is shed like any route, and counts under no limit.
        while ((await read('/openapi.json')).status !== 503);
        for (let i = 0; i < 5; i++) {
          const shed = await read('/todos/1');
          assert.equal(shed.status, 503, `shed read ${i + 1}: ${shed.text}`);
          assert.equal(shed.headers.ratelimit, undefined, 'no limit was consulted');
        }
        holder.exec('ROLLBACK');
        await waiting;
        while ((await read('/openapi.json')).status === 503);
        const admitted = await read('/todos/1');
        assert.equal(admitted.status, 200);
        assert.match(String(admitted.headers.ratelimit), /^"reads";r=2;/);
        assert.deepEqual(
          [
            (await read('/todos/1')).status,
            (await read('/todos/1')).status,
            (await read('/todos/1')).status,
          ],
          [200, 200, 429],
        );
      },
    );
  });

  test("with shedding on, connections not yet accepted queue up to the kernel's limit, not Node's 511", async (t) => {
    if (spawnSync('ss', ['-V']).status !== 0)
      return t.skip('ss (iproute2) is not installed: the listen queue cannot be read');
    const somaxconn = Number(readFileSync('/proc/sys/net/core/somaxconn', 'utf8'));
    if (!(somaxconn > 511))
      return t.skip(`net.core.somaxconn is ${somaxconn}: both queues would be that long`);
    /** The listening socket's queue length, as the kernel reports it (ss's Send-Q of a LISTEN socket). */
    const backlogOf = (url: string): number => {
      const port = new URL(url).port;
      const line = spawnSync('ss', ['-ltn', `sport = :${port}`], { encoding: 'utf8' })
        .stdout.split('\n')
        .find((row) => row.startsWith('LISTEN'));
      return Number(line?.split(/\s+/)[2]);
    };
    const plain = await startServiceProcess(['todo', '--db', 'memory']);
    const shedded = await startServiceProcess(['todo', '--db', 'memory', '--shed-loop-busy', '90']);
    try {
      assert.equal(backlogOf(plain.urls[0] as string), 511);
      assert.equal(backlogOf(shedded.urls[0] as string), Math.min(65_535, somaxconn));
      // The busy signal's counter is there from the start, under its own label.
      const metrics = await send(shedded.urls[0] as string, { method: 'GET', path: '/metrics' });
      assert.match(
        metrics.text,
        /^http_requests_shed_total\{service="todo",signal="loop-busy"\} 0$/m,
      );
    } finally {
      await Promise.all([plain.kill(), shedded.kill()]);
    }
  });

  test('a loop busy past its target sheds a growing share of new requests, and none once it is idle again', async () => {
    // A request falls in the share shed when the draw is below the share: a tiny draw sees any
    // share above none.
    let draw = 1e-9;
    const shedder = new LoadShedder({ loopBusy: 0.5 }, 'todo', undefined, () => draw);
    /** The shedder's answer once it is `expected`, or its last one after `ms`. */
    const settlesOn = async (
      expected: string | undefined,
      ms: number,
    ): Promise<string | undefined> => {
      const until = performance.now() + ms;
      while (shedder.refuse() !== expected && performance.now() < until) await sleep(50);
      return shedder.refuse();
    };
    try {
      await sleep(200);
      assert.equal(shedder.refuse(), undefined, 'an idle loop, after several updates, sheds none');
      // The loop busy all the time but for a turn now and then, for many updates; a draw of one
      // half sees the share once it is past one half.
      draw = 0.5;
      let shedWhileBusy: string | undefined;
      const until = performance.now() + 1_500;
      while (performance.now() < until && shedWhileBusy === undefined) {
        const busyUntil = performance.now() + 40;
        while (performance.now() < busyUntil);
        await new Promise((resolve) => setImmediate(resolve));
        shedWhileBusy = shedder.refuse();
      }
      assert.equal(shedWhileBusy, 'loop-busy');
      draw = 1e-9;
      assert.equal(
        await settlesOn(undefined, 3_000),
        undefined,
        'none shed once the loop waits for input again',
      );
    } finally {
      shedder.stop();
    }
  });

  test('the share shed rises while the loop is busier than its target and falls while it is not, with the time passed, between none and all', () => {
    assert.ok(
      Math.abs(nextShedShare(0, 1, 0.9, 15) - 0.05) < 1e-9,
      'a loop busy throughout for 15 ms raises it by GAIN × 0.1',
    );
    assert.ok(
      Math.abs(nextShedShare(0, 1, 0.9, 60) - 0.2) < 1e-9,
      'four times as long, four times as much',
    );
    assert.equal(nextShedShare(0.5, 0.9, 0.9, 15), 0.5, 'at the target it holds');
    assert.ok(nextShedShare(0.5, 0.2, 0.9, 15) < 0.5, 'a loop that waits lowers it');
    assert.equal(nextShedShare(0.99, 1, 0.5, 15), 1, 'never more than all');
    assert.equal(nextShedShare(0.01, 0, 0.9, 15), 0, 'never less than none');
    assert.equal(nextShedShare(0.3, NaN, 0.9, 0), 0.3, 'no time passed: unchanged');
  });

  test('--shed-loop-busy and SVC_SHED_LOOP_BUSY give a target share of the time; a whole percent from 1 to 99, else refused at start', () => {
    assert.equal(
      settingsOf(readConfig(['--shed-loop-busy', '80'], {}).features, shedding)?.loopBusy,
      0.8,
    );
    assert.equal(
      settingsOf(readConfig([], { SVC_SHED_LOOP_BUSY: '70' }).features, shedding)?.loopBusy,
      0.7,
    );
    assert.equal(settingsOf(readConfig([], {}).features, shedding), undefined);
    for (const bad of ['0', '100', '80.5', 'most']) {
      assert.throws(
        () => readConfig(['--shed-loop-busy', bad], {}),
        (error: unknown) =>
          error instanceof ConfigError &&
          /^--shed-loop-busy must be a whole number from 1 to 99/.test(error.message),
        bad,
      );
    }
  });

  test('the replaced --shed-loop-delay-ms, as an option or a variable, is refused at start naming what replaced it', () => {
    for (const [argv, env] of [
      [['--shed-loop-delay-ms', '20'], {}],
      [[], { SVC_SHED_LOOP_DELAY_MS: '20' }],
    ] as const) {
      assert.throws(
        () => readConfig(argv, env),
        (error: unknown) =>
          error instanceof ConfigError &&
          /replaced by --shed-loop-busy PERCENT/.test(error.message),
      );
    }
  });
});
