// Which limiter a service gets: shared through PostgreSQL when its data is there (every instance on
// the database then counts together), else one in process. A shared one's decisions ride in the
// service's reads (src/db/postgres/ride-along.ts), which are on the same database.
import { performance } from 'node:perf_hooks';
import type { DbSpec, ServiceName } from '../../config.js';
import type { Pooler } from '../../db/postgres/pooler.js';
import type { Rider } from '../../db/postgres/ride-along.js';
import { openPostgresRateLimiter } from '../../db/postgres/rate-limits.js';
import type { Logger } from '../../observe/log.js';
import { inProcessLimiter, type RateLimiter } from '../../rate-limits/limiter.js';
import type { RateLimits } from '../../rate-limits/policy.js';

/** A service's limiter, and its decisions as a rider for the service's store when it has one. */
export interface ServiceLimiter {
  readonly limiter: RateLimiter;
  readonly rider: Rider | undefined;
}

export async function limiterFor(
  service: ServiceName,
  limits: RateLimits,
  db: DbSpec | undefined,
  log: Logger,
  pooler?: Pooler,
): Promise<ServiceLimiter> {
  if (db?.kind === 'postgres') {
    const limiter = await openPostgresRateLimiter({ url: db.url, service, limits, log, pooler });
    return { limiter, rider: limiter.rider };
  }
  // performance.now() is monotonic: a clock set back would otherwise hand out a burst.
  return { limiter: inProcessLimiter(limits, () => performance.now()), rider: undefined };
}
