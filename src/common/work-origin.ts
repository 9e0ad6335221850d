// The request that store work is done for, as storage sees it: an opaque token, set by the pipeline
// around a handler's synchronous run (as deadline-scope.ts sets its deadline) and read by whatever
// the handler queues before its first await (a write for group commit, a read for its batch).
// Storage hands the tokens of a batch back to its observer (src/db/store-observer.ts), which alone
// knows what they are (a request's span, src/telemetry/). It knows neither layer, so both may
// import it.

/** Who asked for a piece of store work; undefined when nobody who asked is traced. */
export type WorkOrigin = object;

let current: WorkOrigin | undefined;

/** The origin of the work the running handler starts now, if it has one. */
export function currentOrigin(): WorkOrigin | undefined {
  return current;
}

/** Makes `origin` current; returns the one it replaces, to give back to leaveOrigin. */
export function enterOrigin(origin: WorkOrigin | undefined): WorkOrigin | undefined {
  const outer = current;
  current = origin;
  return outer;
}

export function leaveOrigin(outer: WorkOrigin | undefined): void {
  current = outer;
}
