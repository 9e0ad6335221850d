// Options every store takes, whichever service it serves.
import type { Logger } from '../log.js';
import type { StoreObserver } from './store-observer.js';

export interface StoreOptions {
  /** SQLite only: FULL (the default) puts every acknowledged write on disk; OFF is for benchmarks. */
  readonly sqliteSynchronous?: 'FULL' | 'OFF';
  /** Where a store reports that its database went away or came back (PostgreSQL). */
  readonly log?: Logger;
  /** Who keeps the store's metrics (group commits, write queue, pool, outages). */
  readonly observer?: StoreObserver;
}
