// A rate limiter as the HTTP layer sees it: a decision per request, by kind and client. In process
// (one GCRA table per kind), or shared by every instance through PostgreSQL
// (src/db/postgres/rate-limits.ts), whose decision waits for the database.
import type { Decision } from './decision.js';
import { GcraTable, type Clock } from './gcra-table.js';
import type { RateLimits, RequestKind } from './policy.js';

/** A shared limiter's store cannot decide now (it is down): the service's fail mode says what then. */
export class LimiterUnavailable extends Error {
  override readonly name = 'LimiterUnavailable';
}

export interface RateLimiter {
  /** Rejects with LimiterUnavailable when a shared store cannot decide; anything else is a bug. */
  decide(kind: RequestKind, client: string): Decision | Promise<Decision>;
  close(): Promise<void>;
}

export function inProcessLimiter(limits: RateLimits, clock: Clock): RateLimiter {
  const writes = limits.writes === undefined ? undefined : new GcraTable(limits.writes, clock);
  const reads = limits.reads === undefined ? undefined : new GcraTable(limits.reads, clock);
  return {
    decide(kind, client) {
      const table = kind === 'writes' ? writes : reads;
      if (table === undefined) throw new Error(`no limit on ${kind}`);
      return table.decide(client);
    },
    close: () => Promise.resolve(),
  };
}
