// Request deadlines (docs/deadlines.md): a request whose handler is still waiting
// (for the database, nearly always) `ms` after the service had the whole request is answered 504
// with Retry-After, and the work behind it that has not started is given up (common/deadline.ts):
// a write still queued for group commit is dropped, a wait for a pooled connection ends, a
// PostgreSQL read is cancelled on the server. A write that has started is let finish: its outcome
// is recorded with its Idempotency-Key as usual, so a retry with that key learns what became of it.
//
// 504 rather than 503: the service's own 503s promise that nothing ran (a store away, a request
// shed), while past a deadline a started write may still commit. 504 is the status that leaves the
// outcome open, as a gateway does whose upstream did not answer in time.
//
// The time a client takes to send its request is not counted: Node's own time-outs bound it (408).
import { Deadline } from '../../common/deadline.js';
import { ApiError } from '../../http/errors.js';
import type { Route } from '../../http/route.js';
import { Slot, type Call, type Pipeline, type PlacedStage } from '../../http/stages/stage.js';

/**
 * On by default, and longer than every bound of the stores' own (a pooled connection's wait, 10 s
 * by default, then a statement's 1.5 s; SQLite's busy wait, 5 s): it fires only where a request
 * would otherwise wait on for work queued behind a stuck database, which the reference never
 * answers at all. --deadline-ms 0 turns it off.
 */
export const DEADLINE_MS_DEFAULT = 15_000;
/** A day: a deadline longer than this bounds nothing a client would wait for. */
export const DEADLINE_MS_MAX = 86_400_000;

/** Seconds after which a retry may find the started write finished, as for a key still in flight. */
const RETRY_AFTER_S = '1';

export const deadlineExceeded = (): ApiError =>
  new ApiError('DEADLINE_EXCEEDED', { headers: { 'Retry-After': RETRY_AFTER_S } });

/**
 * The stage (stage.ts): a handler that waits gets a timer, cleared when it settles; past `ms` the
 * request is answered 504 and the work behind it that has not started is given up. The call's work
 * gets the deadline as it enters, so that the work the handler starts can register what to give up.
 */
export function deadlineStage(ms: number): PlacedStage {
  return {
    name: 'deadline',
    place: 'input',
    enter(call: Call): undefined {
      call.work = { deadline: new Deadline(), origin: call.work.origin };
      return undefined;
    },
    waits(call: Call, pipeline: Pipeline): void {
      TIMER.set(call, setTimeout(deadlinePassed, ms, call, pipeline));
    },
    settles(call: Call): void {
      const timer = TIMER.get(call);
      if (timer === undefined) return;
      clearTimeout(timer);
      TIMER.set(call, undefined);
    },
    docs: {
      errors: (route) => (waitsForStore(route) ? [deadlineExceeded()] : []),
    },
  };
}

/** The timer of a call whose handler waits. */
const TIMER = new Slot<NodeJS.Timeout>('deadline timer');

/** The 504, and the work behind it that has not started is given up. */
function deadlinePassed(call: Call, pipeline: Pipeline): void {
  TIMER.set(call, undefined);
  if (call.status !== 0) return;
  call.work.deadline?.expire();
  pipeline.fail(call, deadlineExceeded());
}

/** An operation that waits for the store is one that lists the 503 of a store away. */
function waitsForStore(route: Route): boolean {
  return (route.docs.otherErrors ?? []).some(
    (error) => error instanceof ApiError && error.code === 'HTTP_503',
  );
}
