// Which limiter a service gets: shared through PostgreSQL when its data is there (every instance on
// the database then counts together), else one in process.
import { performance } from 'node:perf_hooks';
import type { DbSpec, ServiceName } from './config.js';
import type { Pooler } from './db/postgres-pooler.js';
import { openPostgresRateLimiter } from './db/rate-limits-postgres.js';
import type { Logger } from './observe/log.js';
import { inProcessLimiter, type RateLimiter } from './rate-limits/limiter.js';
import type { RateLimits } from './rate-limits/policy.js';

export function limiterFor(
  service: ServiceName,
  limits: RateLimits,
  db: DbSpec | undefined,
  log: Logger,
  pooler?: Pooler,
): Promise<RateLimiter> {
  if (db?.kind === 'postgres')
    return openPostgresRateLimiter({ url: db.url, service, limits, log, pooler });
  // performance.now() is monotonic: a clock set back would otherwise hand out a burst.
  return Promise.resolve(inProcessLimiter(limits, () => performance.now()));
}
