// What a piece of store work is done for, passed as data to every store call that starts work: the
// deadline that bounds it (deadline.ts) and the request it is done for (its origin). The pipeline
// fills it in (the deadline stage, the tracing stage), the route hands it to its store call, and
// storage hands it down to what it starts: a write queued for group commit, a wait for a pooled
// connection, a read queued for its batch. It knows neither layer, so both may import it.
import type { Deadline } from './deadline.js';

/**
 * Who asked for a piece of store work: an opaque token that storage hands back with its batch to
 * its observer (src/db/store-observer.ts), which alone knows what it is (a request's span).
 */
export type WorkOrigin = object;

export interface Work {
  /** When nobody waits for the work any more; undefined: nothing of a request's bounds it. */
  readonly deadline: Deadline | undefined;
  /** Who asked; undefined when nobody who asked is traced. */
  readonly origin: WorkOrigin | undefined;
}

/**
 * Work no deadline bounds and nobody traced asked for: a request with both features off, a test,
 * a background task.
 */
export const UNBOUNDED_WORK: Work = { deadline: undefined, origin: undefined };
