// The one error a store throws when its database, not the request, is at fault. Storage knows
// nothing of HTTP: it carries what kind of fault it is and what went wrong, and the layer above
// decides how to answer (src/store-fault-responses.ts). Any other error a store throws is a bug,
// and stays one.

/**
 * What kind of fault:
 * - unavailable: the database cannot be reached or answered with a server or I/O failure;
 * - busy: another writer held a lock past the time we wait for it (SQLITE_BUSY, a lock or statement
 *   time-out);
 * - saturated: every connection of the pool stayed in use for as long as a request may wait
 *   (overload, not an outage);
 * - full: the disk (or the server's) is full: reads go on, no write can succeed;
 * - read-only: the file, the role or the database is read-only: reads go on, no write can succeed;
 * - corrupt: the database file or an index is damaged; not passing, an operator must restore it.
 */
export type StoreFault = 'unavailable' | 'busy' | 'saturated' | 'full' | 'read-only' | 'corrupt';

export class StoreError extends Error {
  /** The stable code logs and metrics show: STORE_UNAVAILABLE, STORE_READ_ONLY… */
  readonly code: string;
  /** True when it is the writes that fail: the store is not ready until a write succeeds again. */
  readonly failsWrites: boolean;

  constructor(
    readonly fault: StoreFault,
    message: string,
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'StoreError';
    this.code = `STORE_${fault.toUpperCase().replace('-', '_')}`;
    this.failsWrites = fault === 'full' || fault === 'read-only';
  }
}

/** True when `error` is a store fault of that kind. */
export const isStoreFault = (error: unknown, fault: StoreFault): error is StoreError =>
  error instanceof StoreError && error.fault === fault;
