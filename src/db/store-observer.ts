// What a store tells whoever keeps its metrics. Storage does not know who listens or which library
// they use: the composition root hands a listener in (StoreOptions.observer), one per service, and
// every method is optional so that a listener takes only what it needs.
import type { WorkOrigin } from '../common/work.js';
import type { StoreFault } from './store-errors.js';

/** The database a store's batches go to, as a tracer names it: plain data, so that storage knows no tracing library. */
export interface DatabaseTarget {
  readonly system: 'sqlite' | 'postgresql';
  /** The database, as its system names it: SQLite's `main`, PostgreSQL's database name; undefined when not known. */
  readonly namespace: string | undefined;
  /** The server as the configuration names it (PostgreSQL); undefined for a database in the process. */
  readonly server: { readonly address: string; readonly port: number } | undefined;
}

/** A batch of store work on its way to the database, as a tracer sees it. */
export interface BatchWork extends DatabaseTarget {
  /** The statement every operation of the batch runs (SELECT), or undefined when they differ (a group commit's writes). */
  readonly operation: string | undefined;
  /** The one table every operation of the batch works on; undefined when they work on several. */
  readonly collection: string | undefined;
  readonly size: number;
  /**
   * Who asked for each operation (its Work's origin, src/common/work.ts), in order; undefined for
   * work nobody traced asked for.
   */
  readonly origins: readonly (WorkOrigin | undefined)[];
}

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
  /**
   * A batch was sent to the database (tracing: a span for its work); the function returned, if any,
   * is called once it is answered, with the error that failed the whole batch, if one did.
   */
  batchStarted?(work: BatchWork): ((error: Error | undefined) => void) | undefined;
  /** An operation got its turn at the PostgreSQL pool after waiting this long (0 when one was free). */
  poolWaited?(waitedMs: number): void;
}
