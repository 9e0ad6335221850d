// The errors a store throws when its database, not the request, is at fault. Storage knows nothing of
// HTTP: these carry a stable code and what went wrong, and the layer above decides how to answer
// (src/store-answers.ts). Any other error a store throws is a bug, and stays one.

/** What kind of fault; one class each, so that a caller can tell them apart without parsing text. */
export type StoreFault = 'unavailable' | 'busy' | 'saturated' | 'full' | 'read-only' | 'corrupt';

export abstract class StoreError extends Error {
  abstract readonly code: string;
  abstract readonly fault: StoreFault;
  /** True when it is the writes that fail: the store is not ready until a write succeeds again. */
  abstract readonly failsWrites: boolean;

  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = new.target.name;
  }
}

/** The database cannot be reached or answered with a server or I/O failure: try again later. */
export class StoreUnavailableError extends StoreError {
  readonly code = 'STORE_UNAVAILABLE';
  readonly fault = 'unavailable';
  readonly failsWrites = false;
}

/** Another writer held a lock past the time we wait for it (SQLITE_BUSY, a lock or statement timeout). */
export class StoreBusyError extends StoreError {
  readonly code = 'STORE_BUSY';
  readonly fault = 'busy';
  readonly failsWrites = false;
}

/** Every connection of the pool stayed in use for as long as a request may wait: overload, not an outage. */
export class StoreSaturatedError extends StoreError {
  readonly code = 'STORE_SATURATED';
  readonly fault = 'saturated';
  readonly failsWrites = false;
}

/** The disk (or the server's) is full: reads go on, no write can succeed. */
export class StoreFullError extends StoreError {
  readonly code = 'STORE_FULL';
  readonly fault = 'full';
  readonly failsWrites = true;
}

/** The file, the role or the database is read-only: reads go on, no write can succeed. */
export class StoreReadOnlyError extends StoreError {
  readonly code = 'STORE_READ_ONLY';
  readonly fault = 'read-only';
  readonly failsWrites = true;
}

/** The database file or an index is damaged. Not passing: an operator must restore it. */
export class StoreCorruptError extends StoreError {
  readonly code = 'STORE_CORRUPT';
  readonly fault = 'corrupt';
  readonly failsWrites = false;
}
