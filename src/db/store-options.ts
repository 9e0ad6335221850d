// Options every store takes, whichever service it serves.
import type { Logger } from '../observe/log.js';
import type { Pooler } from './postgres/pooler.js';
import type { Rider } from './postgres/ride-along.js';
import type { StoreObserver } from './store-observer.js';

export interface StoreOptions {
  /** SQLite only: FULL (the default) puts every acknowledged write on disk; OFF is for benchmarks. */
  readonly sqliteSynchronous?: 'FULL' | 'OFF';
  /** Where a store reports, once per change, that its database went away, refuses writes or is back. */
  readonly log?: Logger;
  /** Who keeps the store's metrics (group commits, write queue, pool, outages, faults). */
  readonly observer?: StoreObserver;
  /** PostgreSQL only: connections each store keeps at most. */
  readonly poolSize?: number;
  /** PostgreSQL only: how long an operation may wait for a pooled connection before it fails as saturation. */
  readonly poolWaitMs?: number;
  /** PostgreSQL only: transaction when a pooler in transaction mode (PgBouncer) stands between (postgres-pooler.ts). */
  readonly pooler?: Pooler;
  /** PostgreSQL only: work of the same database that the store's reads carry (ride-along.ts): the shared rate limiter's decisions. */
  readonly rider?: Rider;
  /** How long idempotency keys are kept; expired ones are pruned in the background. */
  readonly idempotencyTtlMs?: number;
}
