// The rate limit as a stage (src/features/rate-limits/stage.ts): a read whose decision waits for
// the shared limiter runs meanwhile, and its answer waits for the decision: a refusal that comes
// before the read is done is answered (429), not left as an unhandled rejection, and an admission
// lets the read's own answer through with the limit's fields.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { rateLimitStage } from '../../src/features/rate-limits/stage.js';
import { createRequestHandler } from '../../src/http/app.js';
import { pipelineStages } from '../../src/http/stages/pipeline-stages.js';
import { RateLimitGate } from '../../src/features/rate-limits/gate.js';
import { defineRoute } from '../../src/http/route.js';
import { RequestObserver } from '../../src/http/request-observer.js';
import { createLogger } from '../../src/observe/log.js';
import type { Decision } from '../../src/rate-limits/decision.js';
import { send } from '../support/http.js';

test('a read run ahead of a shared limiter that refuses first is answered 429, and one it admits gets its own answer', async () => {
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown): void => void rejections.push(reason);
  process.on('unhandledRejection', onRejection);
  const log = createLogger('silent');
  const slowRead = defineRoute({
    method: 'GET',
    path: '/slow',
    status: 200,
    params: {},
    docs: { name: 'slow' },
    handle: async () => {
      await new Promise((resolve) => setTimeout(resolve, 100));
      return { status: 200, body: '{}' };
    },
  });
  let admit = false;
  // A shared limiter that answers (on a later turn) well before the read is done.
  const limiter = {
    decide: (): Promise<Decision> =>
      Promise.resolve({
        admitted: admit,
        remaining: admit ? 1 : 0,
        growsInMs: 1_000,
        retryAfterMs: 1_000,
      }),
    close: () => Promise.resolve(),
  };
  const limits = { reads: { perSecond: 1, burst: 1 } };
  const rateLimits = new RateLimitGate({
    limits,
    limiter,
    whenDown: 'open',
    routes: [slowRead],
    log,
  });
  const errorFormat = { name: 'default', catchAll: false } as const;
  const settings = { limits, whenDown: 'open', trustedProxies: undefined } as const;
  const handler = createRequestHandler({
    pipeline: pipelineStages({
      routes: [slowRead],
      errorFormat,
      limits: { bodyBytesMax: 1024, nestingDepthMax: 8 },
      stages: [
        rateLimitStage(rateLimits, settings, 'unkeyed'),
        rateLimitStage(rateLimits, settings, 'keyed'),
      ],
    }),
    errorFormat,
    log,
    observer: new RequestObserver({ log, accessLog: false }),
    shutdown: { started: false },
  });
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const refused = await send(url, { method: 'GET', path: '/slow' });
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['retry-after'], '1');
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    admit = true;
    const admitted = await send(url, { method: 'GET', path: '/slow' });
    assert.equal(admitted.status, 200);
    assert.match(String(admitted.headers.ratelimit), /^"reads";r=1;t=\d+$/);
    assert.deepEqual(rejections, [], 'no unhandled rejection');
  } finally {
    process.off('unhandledRejection', onRejection);
    await new Promise((resolve) => server.close(resolve));
  }
});
