// The rate limits in the request pipeline, in this process: on a clock the test moves (a limiter
// given to the server), the answers' RateLimit fields and their 429, and a shared limiter that
// cannot decide, open or closed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { get, json } from '../support/http.js';
import { withServer } from '../support/server.js';
import {
  inProcessLimiter,
  LimiterUnavailable,
  type RateLimiter,
} from '../../src/rate-limits/limiter.js';

const LIMITS = { reads: { perSecond: 2, burst: 2 } };

test('the fields follow the clock: a refusal says how long to wait, and once the clock has moved that far the request is admitted', async () => {
  let nowMs = 0;
  const limiter = inProcessLimiter(LIMITS, () => nowMs);
  await withServer({ service: 'todo', rateLimiting: { limits: LIMITS, limiter } }, async (url) => {
    assert.equal((await get(url, '/todos/1')).headers.ratelimit, '"reads";r=1;t=1');
    assert.equal((await get(url, '/todos/1')).headers.ratelimit, '"reads";r=0;t=1');
    const refused = await get(url, '/todos/1');
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['retry-after'], '1');
    assert.equal(refused.headers['ratelimit-policy'], '"reads";q=4;w=1');
    nowMs += 499;
    assert.equal((await get(url, '/todos/1')).status, 429);
    nowMs += 1;
    const admitted = await get(url, '/todos/1');
    assert.equal(admitted.status, 200);
    assert.deepEqual(json(admitted), { id: 1, title: 'Buy milk', done: false });
    // A read of a to-do that does not exist counts as a read too: refused before it looks.
    assert.equal((await get(url, '/todos/99')).status, 429);
  });
});

test('a limiter that cannot decide: open admits without the fields, closed answers 503 with Retry-After', async () => {
  const down: RateLimiter = {
    decide: () => Promise.reject(new LimiterUnavailable('down')),
    close: () => Promise.resolve(),
  };
  await withServer(
    {
      service: 'todo',
      errors: 'unified',
      rateLimiting: { limits: LIMITS, limiter: down, whenDown: 'open' },
    },
    async (url) => {
      const res = await get(url, '/todos/1');
      assert.equal(res.status, 200);
      assert.equal(res.headers.ratelimit, undefined);
    },
  );
  await withServer(
    {
      service: 'todo',
      errors: 'unified',
      rateLimiting: { limits: LIMITS, limiter: down, whenDown: 'closed' },
    },
    async (url) => {
      const res = await get(url, '/todos/1');
      assert.equal(res.status, 503);
      assert.equal(res.headers['retry-after'], '1');
      assert.deepEqual(json(res), { error: { code: 'HTTP_503', message: 'Service Unavailable' } });
    },
  );
});

test('a limiter that fails for any other reason is a failure, not an admission: 500, whatever the mode', async () => {
  const broken: RateLimiter = {
    decide: () => Promise.reject(new Error('a bug')),
    close: () => Promise.resolve(),
  };
  await withServer(
    {
      service: 'todo',
      errors: 'unified',
      rateLimiting: { limits: LIMITS, limiter: broken, whenDown: 'open' },
    },
    async (url) => {
      assert.equal((await get(url, '/todos/1')).status, 500);
    },
  );
});
