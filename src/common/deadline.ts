// A request's deadline as the work behind it sees it: the words the HTTP layer (which answers when
// the deadline passes, src/features/deadlines/deadline.ts) and storage (which gives up the work nobody
// waits for any more) share, declared once and knowing neither. It travels as data, in the Work a
// store call is given (work.ts): whatever the call starts (a write queued for group commit, a wait
// for a pooled connection, a read queued for its batch) registers on it what to give up.

/** The reason work was given up: its request's deadline passed. Nobody receives it but the log. */
export class DeadlinePassed extends Error {
  readonly code = 'DEADLINE_PASSED';
  constructor() {
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super("the request's deadline passed before this work started");
    Error.stackTraceLimit = stackTraceLimit;
    this.name = 'DeadlinePassed';
  }
}

/** A point after which nobody waits for the work done under it any more. */
export class Deadline {
  private passed = false;
  /** What to give up when it passes; made on the first registration, since most requests register nothing. */
  private cancels: Set<() => void> | undefined;

  get expired(): boolean {
    return this.passed;
  }

  /** Calls `cancel` once when the deadline passes (at once if it has); the function returned forgets it. */
  onExpiry(cancel: () => void): () => void {
    if (this.passed) {
      cancel();
      return noop;
    }
    const cancels = (this.cancels ??= new Set());
    cancels.add(cancel);
    return () => {
      cancels.delete(cancel);
    };
  }

  /** Passes the deadline: everything registered is given up, in the order it registered. */
  expire(): void {
    if (this.passed) return;
    this.passed = true;
    const cancels = this.cancels;
    this.cancels = undefined;
    if (cancels !== undefined) for (const cancel of cancels) cancel();
  }
}

const noop = (): void => undefined;

/**
 * The deadline of work shared by several requests (one query for a batch of reads): it passes when
 * the last of theirs does. Undefined when any of them has none, since someone then still waits.
 */
export function latestOf(deadlines: readonly (Deadline | undefined)[]): Deadline | undefined {
  if (deadlines.length === 0 || deadlines.includes(undefined)) return undefined;
  const shared = new Deadline();
  let left = deadlines.length;
  const passed = (): void => {
    left -= 1;
    if (left === 0) shared.expire();
  };
  for (const deadline of deadlines as readonly Deadline[]) deadline.onExpiry(passed);
  return shared;
}
