// Options every store takes, whichever service it serves.

export interface StoreOptions {
  /** SQLite only: FULL (the default) puts every acknowledged write on disk; OFF is for benchmarks. */
  readonly sqliteSynchronous?: 'FULL' | 'OFF';
}
