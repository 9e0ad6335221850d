// A server's close also closes its rate limiter: a limiter held in PostgreSQL has a pool and a
// pruning timer of its own, which would otherwise outlive the server that opened them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { featureOn } from '../../src/features/feature.js';
import { rateLimits } from '../../src/features/rate-limits/feature.js';
import { defineRoute } from '../../src/http/route.js';
import { createLogger } from '../../src/observe/log.js';
import { inProcessLimiter, type RateLimiter } from '../../src/rate-limits/limiter.js';
import { startServer } from '../../src/server.js';

test("closing the server closes its rate limiter, once the server's own shutdown is done", async () => {
  const limits = { reads: { perSecond: 10, burst: 10 } };
  const inner = inProcessLimiter(limits, () => Date.now());
  let closed = 0;
  const limiter: RateLimiter = {
    decide: (kind, client) => inner.decide(kind, client),
    close: () => {
      closed += 1;
      return Promise.resolve();
    },
  };
  const server = await startServer(
    {
      title: 'Limited',
      version: '0',
      routes: [
        defineRoute({
          method: 'GET',
          path: '/ping',
          status: 200,
          params: {},
          docs: { name: 'ping', succeeds: false },
          handle: () => ({ status: 204 }),
        }),
      ],
      components: {},
      ready: () => Promise.resolve(true),
      close: () => Promise.resolve(),
    },
    {
      host: '127.0.0.1',
      port: 0,
      errorFormat: { name: 'default', catchAll: false },
      service: 'limited',
      log: createLogger('silent'),
      features: [
        await featureOn(rateLimits, {
          limits,
          limiter,
          whenDown: 'open',
          trustedProxies: undefined,
        }).join({
          service: 'todo',
          db: { kind: 'memory' },
          pooler: undefined,
          errorFormat: { name: 'default', catchAll: false },
          log: createLogger('silent'),
          metrics: undefined,
        }),
      ],
    },
  );
  assert.equal(closed, 0);
  await server.close();
  assert.equal(closed, 1);
});
