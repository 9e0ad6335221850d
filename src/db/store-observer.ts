// What a store tells whoever keeps its metrics. Storage does not know who listens or which library
// they use: the composition root hands a listener in (StoreOptions.observer), one per service, and
// every method is optional so that a listener takes only what it needs.
import type { StoreFault } from './store-errors.js';

export interface PoolStats {
  /** Connections open, busy or idle. */
  readonly total: number;
  readonly idle: number;
  /** Operations waiting for a connection (saturation when it stays above 0). */
  readonly waiting: number;
}

export interface StoreObserver {
  /** A group-committed batch was committed: how many writes it held, and how long its commit took. */
  batchCommitted?(writes: number, commitSeconds: number): void;
  /** Called once: `depth()` says, whenever asked, how many writes are queued or in a batch not yet committed. */
  watchWriteQueue?(depth: () => number): void;
  /** Called once: `stats()` says, whenever asked, what the PostgreSQL pool holds. */
  watchPool?(stats: () => PoolStats): void;
  /** The database became unreachable: once per outage, not once per failed request. */
  outage?(): void;
  /** An operation failed for a database fault (store-errors.ts): once per failed operation. */
  fault?(fault: StoreFault): void;
  /** An operation got its turn at the PostgreSQL pool after waiting this long (0 when one was free). */
  poolWaited?(waitedMs: number): void;
}
