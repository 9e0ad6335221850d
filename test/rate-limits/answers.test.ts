// Rate limits as a client meets them, against the service as a real process: a client over its
// limit is answered 429 with Retry-After and the RateLimit fields in every error format, another
// client is not touched, and after Retry-After the first is admitted again. A refusal changes
// nothing, an Idempotency-Key replay is answered whatever the limit, the operational routes are
// never limited, and the document describes the 429 as it is answered.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { get, json, send, type RawResponse } from '../support/http.js';
import { OpenApiChecker } from '../support/openapi-check.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { PROCESS_SUITE_TIMEOUT_MS } from '../support/time-limits.js';

/** Reads: 2 a second after a burst of 3; writes: 1 a second, one at a time. */
const LIMITS = 'writes=1/s:1,reads=2/s:3';
const OTHER_CLIENT = '127.0.0.2';

const read = (url: string, from?: string): Promise<RawResponse> =>
  send(url, { method: 'GET', path: '/todos/1', localAddress: from });
const create = (url: string, key?: string): Promise<RawResponse> =>
  send(url, {
    method: 'POST',
    path: '/todos',
    headers: [
      ['Content-Type', 'application/json'],
      ...(key === undefined ? [] : ([['Idempotency-Key', key]] as const)),
    ],
    body: '{"title":"Write the report"}',
  });

const limitFields = (res: RawResponse): [unknown, unknown, unknown] => [
  res.headers['retry-after'],
  res.headers['ratelimit-policy'],
  res.headers.ratelimit,
];

const BODIES = {
  default: {
    detail: {
      code: 'RATE_LIMITED',
      message: 'Too many requests: retry after the Retry-After seconds',
    },
  },
  unified: {
    error: {
      code: 'RATE_LIMITED',
      message: 'Too many requests: retry after the Retry-After seconds',
    },
  },
  problem: {
    type: '/docs/problems#rate-limited',
    title: 'Too many requests',
    status: 429,
    detail: 'Too many requests: retry after the Retry-After seconds',
    code: 'RATE_LIMITED',
  },
} as const;

describe('rate limits as a client meets them', { timeout: PROCESS_SUITE_TIMEOUT_MS }, () => {
  for (const format of ['default', 'unified', 'problem'] as const) {
    test(`${format} format: over its limit a client gets 429 with Retry-After and the RateLimit fields, another client does not, and after Retry-After it is admitted again`, async () => {
      const service = await startServiceProcess([
        'todo',
        '--db',
        'memory',
        '--errors',
        format,
        '--rate-limit',
        LIMITS,
      ]);
      try {
        const url = service.urls[0] as string;
        const burst = [await read(url), await read(url), await read(url)];
        assert.deepEqual(
          burst.map((res) => res.status),
          [200, 200, 200],
        );
        assert.deepEqual(burst.map(limitFields), [
          [undefined, '"reads";q=7;w=2', '"reads";r=2;t=1'],
          [undefined, '"reads";q=7;w=2', '"reads";r=1;t=1'],
          [undefined, '"reads";q=7;w=2', '"reads";r=0;t=1'],
        ]);
        const refused = await read(url);
        assert.equal(refused.status, 429);
        assert.deepEqual(limitFields(refused), ['1', '"reads";q=7;w=2', '"reads";r=0;t=1']);
        assert.equal(
          refused.headers['content-type'],
          format === 'problem' ? 'application/problem+json' : 'application/json',
        );
        assert.deepEqual(json(refused), BODIES[format]);
        assert.match(String(refused.headers['x-request-id']), /^[0-9a-f-]{36}$/);

        const other = await read(url, OTHER_CLIENT);
        assert.equal(other.status, 200, 'another client is not affected');
        assert.equal(other.headers.ratelimit, '"reads";r=2;t=1');

        await sleep(Number(refused.headers['retry-after']) * 1000);
        assert.equal((await read(url)).status, 200, 'admitted again after Retry-After');

        // The document describes both answers as they came.
        const checker = new OpenApiChecker(json(await get(url, '/openapi.json')));
        const operation = checker.operation('GET', '/todos/1');
        assert.ok(operation !== undefined);
        assert.deepEqual(checker.problems(operation, refused), []);
        assert.deepEqual(checker.problems(operation, burst[0] as RawResponse), []);
        assert.deepEqual(
          Object.keys(operation.responses['429']?.headers ?? {}).filter(
            (name) => name !== 'X-Request-Id',
          ),
          ['Retry-After', 'RateLimit-Policy', 'RateLimit'],
        );
      } finally {
        await service.kill();
      }
    });
  }

  test('--trust-proxy: a forged X-Forwarded-For from a peer that is not a trusted proxy is ignored; a trusted one names the client', async () => {
    const service = await startServiceProcess([
      'todo',
      '--db',
      'memory',
      '--rate-limit',
      'reads=1/s:2',
      '--trust-proxy',
      OTHER_CLIENT,
    ]);
    try {
      const url = service.urls[0] as string;
      const forged = (i: number, from?: string): Promise<RawResponse> =>
        send(url, {
          method: 'GET',
          path: '/todos/1',
          headers: [['X-Forwarded-For', `198.51.100.${i}`]],
          localAddress: from,
        });
      // From 127.0.0.1, not a trusted proxy: every "client" it makes up is still itself.
      const untrusted = [];
      for (let i = 1; i <= 4; i++) untrusted.push((await forged(i)).status);
      assert.deepEqual(untrusted, [200, 200, 429, 429]);
      // From the trusted proxy, each forwarded address is a client of its own, with its own burst.
      const proxied = [];
      for (let i = 1; i <= 4; i++)
        proxied.push(
          (await forged(i, OTHER_CLIENT)).status,
          (await forged(i, OTHER_CLIENT)).status,
        );
      assert.deepEqual(proxied, [200, 200, 200, 200, 200, 200, 200, 200]);
      assert.equal((await forged(1, OTHER_CLIENT)).status, 429, 'and each is limited');
    } finally {
      await service.kill();
    }
  });

  test("behind a proxy that appends X-Forwarded-For, a client naming itself in Forwarded neither escapes its limit nor spends a victim's allowance", async () => {
    // The proxy is OTHER_CLIENT; every request it forwards carries the address it received it from.
    const service = await startServiceProcess([
      'todo',
      '--db',
      'memory',
      '--rate-limit',
      'reads=0.01/s:2',
      '--trust-proxy',
      OTHER_CLIENT,
    ]);
    try {
      const url = service.urls[0] as string;
      const viaProxy = (
        client: string,
        forged: readonly (readonly [string, string])[] = [],
      ): Promise<RawResponse> =>
        send(url, {
          method: 'GET',
          path: '/todos/1',
          headers: [...forged, ['X-Forwarded-For', client]],
          localAddress: OTHER_CLIENT,
        });
      const attacker = '203.0.113.50';
      const victim = '198.51.100.99';
      // A new name in Forwarded each time, and the victim's name: all of them count as the
      // attacker.
      const statuses = [];
      for (let i = 1; i <= 6; i++)
        statuses.push((await viaProxy(attacker, [['Forwarded', `for=198.51.100.${i}`]])).status);
      statuses.push((await viaProxy(attacker, [['Forwarded', `for=${victim}`]])).status);
      assert.deepEqual(statuses, [200, 200, 429, 429, 429, 429, 429]);
      const own = await viaProxy(victim);
      assert.equal(own.status, 200);
      assert.equal(
        own.headers.ratelimit,
        '"reads";r=1;t=100',
        "the victim's allowance is whole: its first request leaves burst - 1",
      );
    } finally {
      await service.kill();
    }
  });

  test('behind a proxy that appends Forwarded (--trust-proxy-header forwarded), a forged X-Forwarded-For or leftmost Forwarded is not believed', async () => {
    const service = await startServiceProcess([
      'todo',
      '--db',
      'memory',
      '--rate-limit',
      'reads=0.01/s:2',
      '--trust-proxy',
      OTHER_CLIENT,
      '--trust-proxy-header',
      'forwarded',
    ]);
    try {
      const url = service.urls[0] as string;
      const attacker = '203.0.113.50';
      const victim = '198.51.100.99';
      // The client's own header lines first; the proxy adds its Forwarded line after them.
      const viaProxy = (
        client: string,
        forged: readonly (readonly [string, string])[] = [],
      ): Promise<RawResponse> =>
        send(url, {
          method: 'GET',
          path: '/todos/1',
          headers: [...forged, ['Forwarded', `for=${client}`]],
          localAddress: OTHER_CLIENT,
        });
      const statuses = [];
      for (let i = 1; i <= 3; i++)
        statuses.push((await viaProxy(attacker, [['X-Forwarded-For', `198.51.100.${i}`]])).status);
      statuses.push((await viaProxy(attacker, [['X-Forwarded-For', victim]])).status);
      statuses.push((await viaProxy(attacker, [['Forwarded', `for=${victim}`]])).status);
      assert.deepEqual(statuses, [200, 200, 429, 429, 429]);
      const own = await viaProxy(victim);
      assert.equal(own.status, 200);
      assert.equal(own.headers.ratelimit, '"reads";r=1;t=100', "the victim's allowance is whole");
    } finally {
      await service.kill();
    }
  });

  describe('one service under limits', () => {
    let service: ServiceProcess;
    let url = '';
    before(async () => {
      service = await startServiceProcess([
        'todo',
        '--db',
        'memory',
        '--rate-limit',
        LIMITS,
        '--access-log',
        'off',
      ]);
      url = service.urls[0] as string;
    });
    after(() => service.kill());

    test('a write over the limit changes nothing and leaves its key free; a replay of a key is answered over the limit', async () => {
      const first = await create(url, 'key-first');
      assert.equal(first.status, 201);
      const created = json(first) as { id: number };

      const refused = await create(url, 'key-second');
      assert.equal(refused.status, 429);
      assert.equal(refused.headers['ratelimit-policy'], '"writes";q=2;w=1');
      const replay = await create(url, 'key-first');
      assert.equal(
        replay.status,
        201,
        'the replay is answered though its client is over the limit',
      );
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.text, first.text);
      assert.equal(
        (await get(url, `/todos/${created.id + 1}`)).status,
        404,
        'the refused write created nothing',
      );

      await sleep(Number(refused.headers['retry-after']) * 1000);
      const retried = await create(url, 'key-second');
      assert.equal(retried.status, 201);
      assert.equal(
        retried.headers['idempotent-replayed'],
        undefined,
        'the refused key was free: its retry ran',
      );
      assert.deepEqual(json(retried), {
        id: created.id + 1,
        title: 'Write the report',
        done: false,
      });
    });

    test('a HEAD counts as a read; /healthz, /readyz, /metrics and the docs are never limited', async () => {
      await sleep(2000); // the whole burst back
      for (let i = 0; i < 3; i++)
        assert.equal((await send(url, { method: 'HEAD', path: '/todos/1' })).status, 200);
      assert.equal((await send(url, { method: 'HEAD', path: '/todos/1' })).status, 429);
      assert.equal((await read(url)).status, 429, 'the HEADs used up the reads');
      for (const path of ['/healthz', '/readyz', '/metrics', '/openapi.json', '/docs', '/redoc']) {
        for (let i = 0; i < 5; i++) {
          const res = await get(url, path);
          assert.equal(res.status, 200, path);
          assert.equal(res.headers.ratelimit, undefined, path);
        }
      }
    });

    test('refusals are counted in /metrics by kind, and the log says so once, not once per refusal', async () => {
      for (let i = 0; i < 30; i++) await read(url);
      const metrics = (await get(url, '/metrics')).text;
      const reads = /http_requests_rate_limited_total\{service="todo",kind="reads"\} (\d+)/.exec(
        metrics,
      );
      assert.ok(reads !== null && Number(reads[1]) >= 30, metrics.slice(0, 200));
      assert.match(metrics, /http_requests_rate_limited_total\{service="todo",kind="writes"\} 1\b/);
      const warnings = service
        .output()
        .split('\n')
        .filter((line) => line.includes('requests refused over their rate limit'));
      assert.equal(warnings.length, 1, service.output());
    });
  });
});
