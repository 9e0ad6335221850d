// A value that may be there at once or only later: what a store's read gives when it can answer
// without waiting (SQLite, on the event loop's own connection) or must wait (PostgreSQL). Taken as
// it comes, a read that needs no wait costs no promise: a promise, its reaction and the microtask
// that runs it were about 3 % of a logged GET /todos/1 in a perf profile, more than the read.

export type Eventually<T> = T | Promise<T>;

export function isPromise<T>(value: Eventually<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/** `next(value)`: at once if the value is there (a throw then propagates as it is), else once it is. */
export function andThen<T, U>(value: Eventually<T>, next: (value: T) => U): Eventually<U> {
  return isPromise(value) ? value.then(next) : next(value);
}
