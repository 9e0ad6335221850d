// The RateLimit fields tell the truth, read as a client reads them (a Structured Field Values
// parser, RFC 9651) and checked against the admissions counted: `r` is what may be sent now and no
// more is admitted before `t` seconds, when r next grows; a 429's `t` is its Retry-After; and
// RateLimit-Policy's `q` is the most admitted in any `w` seconds. On a clock the test moves (in
// process, exact), and in real time across two service processes on one PostgreSQL database,
// where each check only counts what the timings prove was decided within the interval.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { describe, test } from 'node:test';
import { parseList } from 'structured-headers';
import { inProcessLimiter } from '../../src/rate-limits/limiter.js';
import { get, send, type RawResponse } from '../support/http.js';
import { createTestDatabase, postgresSkip } from '../support/postgres.js';
import { withServer } from '../support/server.js';
import { startServiceProcess } from '../support/service-process.js';
import { processSuiteUnless } from '../support/suite.js';

interface Fields {
  readonly admitted: boolean;
  readonly r: number;
  readonly t: number;
  readonly q: number;
  readonly w: number;
  readonly retryAfter: number | undefined;
}

/** One policy item named `kind` with integer parameters, as a Structured Field Values parser reads it. */
function policyItem(
  value: unknown,
  kind: string,
  names: readonly string[],
): Record<string, number> {
  assert.equal(typeof value, 'string');
  const list = parseList(value as string);
  assert.equal(list.length, 1, value as string);
  const [name, params] = list[0] as [unknown, Map<string, unknown>];
  assert.equal(name, kind, 'the policy is named by a String');
  const out: Record<string, number> = {};
  for (const key of names) {
    const param = params.get(key);
    assert.ok(
      Number.isInteger(param) && (param as number) >= 0,
      `${key}=${String(param)} in ${value as string}`,
    );
    out[key] = param as number;
  }
  return out;
}

function fieldsOf(res: RawResponse): Fields {
  assert.ok(res.status === 200 || res.status === 429, `status ${res.status}`);
  const { r, t } = policyItem(res.headers.ratelimit, 'reads', ['r', 't']) as {
    r: number;
    t: number;
  };
  const { q, w } = policyItem(res.headers['ratelimit-policy'], 'reads', ['q', 'w']) as {
    q: number;
    w: number;
  };
  const retryAfter =
    res.headers['retry-after'] === undefined ? undefined : Number(res.headers['retry-after']);
  return { admitted: res.status === 200, r, t, q, w, retryAfter };
}

describe('the RateLimit fields tell the truth', () => {
  test("in process, on a moved clock: r is exact, none more before t and one more by t, a 429's t is its Retry-After, q is the most admitted in any w", async () => {
    // One every 4 s after a burst of 3: the window is 12 s, in which 3 + 3 can be admitted.
    const limits = { reads: { perSecond: 0.25, burst: 3 } };
    let nowMs = 0;
    const limiter = inProcessLimiter(limits, () => nowMs);
    const answers: (Fields & { atMs: number })[] = [];
    await withServer({ service: 'todo', rateLimiting: { limits, limiter } }, async (url) => {
      // A greedy client: every 250 ms it sends until refused; pauses now and then so that its
      // allowance grows back.
      for (let step = 0; step < 400; step++) {
        nowMs = step * 250;
        if (step % 100 >= 80) continue;
        for (let i = 0; i < 5; i++) {
          const fields = fieldsOf(await get(url, '/todos/1'));
          answers.push({ ...fields, atMs: nowMs });
          if (!fields.admitted) break;
        }
      }
    });
    const admissions = answers.filter((answer) => answer.admitted);
    /** True when the client was sending at every step after fromMs up to toMs. */
    const sendingThrough = (fromMs: number, toMs: number): boolean => {
      for (let ms = fromMs + 250; ms <= toMs; ms += 250)
        if (ms >= 100_000 || (ms / 250) % 100 >= 80) return false;
      return true;
    };
    const admittedWithin = (from: number, fromMs: number, toMs: number): number =>
      answers.filter(
        (answer, j) => j > from && answer.admitted && answer.atMs >= fromMs && answer.atMs <= toMs,
      ).length;
    answers.forEach((answer, i) => {
      assert.deepEqual([answer.q, answer.w], [6, 12]);
      if (!answer.admitted)
        assert.equal(answer.t, answer.retryAfter, `answer ${i}: a 429's t is its Retry-After`);
      assert.ok(answer.t >= 1 && answer.r < 3, `answer ${i}`);
      // r grows in (t − 1, t] seconds: until t − 1 no more than r, by t at least r + 1 for a greedy
      // client.
      const soon = admittedWithin(i, answer.atMs, answer.atMs + (answer.t - 1) * 1000);
      assert.ok(
        soon <= answer.r,
        `answer ${i} at ${answer.atMs} ms said r=${answer.r};t=${answer.t}: ${soon} admitted within t − 1 s`,
      );
      if (sendingThrough(answer.atMs, answer.atMs + answer.t * 1000)) {
        const byT = admittedWithin(i, answer.atMs, answer.atMs + answer.t * 1000);
        assert.ok(
          byT >= answer.r + 1,
          `answer ${i} at ${answer.atMs} ms said r=${answer.r};t=${answer.t}: only ${byT} admitted by t`,
        );
      }
    });
    const inWindow = admissions.map(
      (first) =>
        admissions.filter((other) => other.atMs >= first.atMs && other.atMs <= first.atMs + 12_000)
          .length,
    );
    assert.equal(
      Math.max(...inWindow),
      6,
      'q is what is admitted in w, exactly: never more, and reached',
    );
  });
});

const skip = await postgresSkip();

processSuiteUnless(
  skip,
  'the RateLimit fields across two instances on one PostgreSQL database',
  () => {
    test("two instances: no more than r admitted before t, a 429's t is its Retry-After, no more than q in any w", async (t) => {
      const database = await createTestDatabase();
      // One every 4 s after a burst of 2: w = 8 s, in which 2 + 2 can be admitted.
      const args = [
        'todo',
        '--db',
        database.url,
        '--rate-limit',
        'reads=0.25/s:2',
        '--access-log',
        'off',
      ];
      const instances = await Promise.all([startServiceProcess(args), startServiceProcess(args)]);
      const answers: (Fields & { sentMs: number; answeredMs: number })[] = [];
      try {
        const startMs = performance.now();
        for (let i = 0; performance.now() - startMs < 13_000; i++) {
          const sentMs = performance.now();
          const res = await send(instances[i % 2]?.urls[0] as string, {
            method: 'GET',
            path: '/todos/1',
          });
          answers.push({ ...fieldsOf(res), sentMs, answeredMs: performance.now() });
          await new Promise((resolve) => setTimeout(resolve, 150));
        }
      } finally {
        await Promise.all(instances.map((instance) => instance.kill()));
        await database.drop();
      }
      const admissions = answers.filter((answer) => answer.admitted);
      t.diagnostic(`${answers.length} sent, ${admissions.length} admitted`);
      assert.ok(admissions.length >= 4, 'the burst, then more as the rate allows');
      answers.forEach((answer, i) => {
        assert.deepEqual([answer.q, answer.w], [4, 8]);
        if (!answer.admitted)
          assert.equal(answer.t, answer.retryAfter, `answer ${i}: a 429's t is its Retry-After`);
        // Decided before the answer's own decision + (t − 1) s: answered before it was sent + (t −
        // 1) s.
        const soon = answers.filter(
          (other, j) =>
            j > i && other.admitted && other.answeredMs < answer.sentMs + (answer.t - 1) * 1000,
        ).length;
        assert.ok(
          soon <= answer.r,
          `answer ${i} said r=${answer.r};t=${answer.t}: ${soon} admitted sooner`,
        );
      });
      for (const first of admissions) {
        // Decided within w of the first's decision: answered within w of its sending.
        const inWindow = admissions.filter(
          (other) => other.answeredMs >= first.sentMs && other.answeredMs <= first.sentMs + 8_000,
        ).length;
        assert.ok(inWindow <= 4, `${inWindow} admitted within w = 8 s, q = 4`);
      }
    });
  },
);
