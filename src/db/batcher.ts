// Group commit's queue, the same on every database: operations queue here, and whenever a batch
// slot is free the queue leaves as one batch, handed to a runner that decides the whole batch in
// one transaction (a SQLite writer thread, one PostgreSQL statement). While a batch is out, new
// operations gather for the next one, so the commits per second stay bounded whatever the request
// rate, and each commit's wait for the disk is shared by every operation of its batch.
//
// Each operation is answered only with its batch's result: nothing is acknowledged before the
// runner says the batch is committed, and a batch that fails fails every operation in it.
import { performance } from 'node:perf_hooks';
import { DeadlinePassed, latestOf, type Deadline } from '../common/deadline.js';
import { UNBOUNDED_WORK, type Work, type WorkOrigin } from '../common/work.js';
import type { DatabaseTarget, StoreObserver } from './store-observer.js';

/** One operation's answer inside a committed batch: its outcome, or the error that undid it alone. */
export type Settled<Outcome> =
  { readonly ok: true; readonly outcome: Outcome } | { readonly ok: false; readonly error: Error };

/**
 * Decides and commits a batch; resolves with one result per operation, in order, once the batch
 * is committed. Rejecting fails the whole batch: none of it may be acknowledged. `work` bounds the
 * batch as a whole (BatcherOptions.cancelsStarted); for a batch of writes it is UNBOUNDED_WORK.
 */
export type BatchRunner<Op, Outcome> = (
  ops: readonly Op[],
  work: Work,
) => Promise<readonly Settled<Outcome>[]>;

export interface BatchLimits {
  /** Bounds one transaction's length, and so the wait of the operations queued behind it. */
  readonly opsMax: number;
  /** Bounds one batch's size in memory and on the wire; an operation larger than this goes alone. */
  readonly bytesMax: number;
  /** Batches out at once: the next is ready when the previous commits, so the database never waits for us. */
  readonly inFlightMax: number;
}

export interface BatcherOptions<Op> extends BatchLimits {
  /** An operation's share of `bytesMax`: roughly its bytes on the wire. */
  readonly sizeOf: (op: Op) => number;
  /** Called when a batch is committed, before any of its operations is acknowledged. */
  readonly onCommitted?: () => void;
  /**
   * True for a batch's failure that the queued operations would meet too (the database is gone):
   * they fail with it at once, untried, instead of each waiting out its own time-out in turn.
   */
  readonly failsQueued?: (error: Error) => boolean;
  /** Told each batch's size and commit time, and shown the queue's depth. */
  readonly observer?: StoreObserver;
  /**
   * Reads only: a batch runs under the deadline of the last of its requests (latestOf), so
   * that its query is cancelled once nobody waits for it. Writes never are: one that has started
   * is let finish, so that its outcome is known (and recorded with its Idempotency-Key).
   */
  readonly cancelsStarted?: boolean;
  /** What a batch is, for a tracer (StoreObserver.batchStarted); none: its batches are not traced. */
  readonly work?: BatchKind<Op>;
  /** Its batches may leave inside another batcher's statement (sendThrough, ride-along.ts). */
  readonly carried?: Carried;
}

/** What a batcher's batches are, for a tracer: where they go, the statement, and the table of a batch's operations. */
export interface BatchKind<Op> extends DatabaseTarget {
  readonly operation: string | undefined;
  /** The one table every operation of `ops` works on, if there is one. */
  readonly collectionOf: (ops: readonly Op[]) => string | undefined;
}

/**
 * How a carried batcher waits for a carrier: one more turn, so that a carrier whose operations
 * queued in the same turn leaves first and takes its queue along; then, while a carrier has
 * operations queued (it leaves when one of its slots is free), up to `waitMs` more.
 */
export interface Carried {
  readonly waiting: () => boolean;
  readonly waitMs: number;
}

interface Waiting<Op, Outcome> {
  readonly op: Op;
  readonly size: number;
  resolve(outcome: Outcome): void;
  reject(error: Error): void;
  /** The deadline of the request that asked, if any, and how to stop watching it once the operation is sent. */
  readonly deadline: Deadline | undefined;
  forget: (() => void) | undefined;
  /** Who asked (its Work's origin): handed to the observer with the batch. */
  readonly origin: WorkOrigin | undefined;
}

/** The work of a batch shared by several requests: bounded by the last of their deadlines. */
function sharedWork(batch: readonly { readonly deadline: Deadline | undefined }[]): Work {
  const deadline = latestOf(batch.map((w) => w.deadline));
  return deadline === undefined ? UNBOUNDED_WORK : { deadline, origin: undefined };
}

export class Batcher<Op, Outcome> {
  private queue: Waiting<Op, Outcome>[] = [];
  /** Batches sent and not yet answered, and the operations they hold. */
  private inFlight = 0;
  private inFlightOps = 0;
  private sendScheduled = false;
  /** A carried batcher's wait for a carrier (Carried), if one is on. */
  private carrierWait: NodeJS.Timeout | undefined;
  private drained: (() => void)[] = [];
  private closed = false;
  /** performance.now() when the last batch was answered: a batch's commit starts no earlier. */
  private lastSettledMs = 0;

  constructor(
    private readonly run: BatchRunner<Op, Outcome>,
    private readonly options: BatcherOptions<Op>,
  ) {
    options.observer?.watchWriteQueue?.(() => this.pending);
  }

  /** Operations queued, not yet in a batch. */
  get queued(): number {
    return this.queue.length;
  }

  /** Operations queued or in a batch not yet answered. */
  get pending(): number {
    return this.queue.length + this.inFlightOps;
  }

  /** Queues `op` for the next batch; the deadline of `work` drops it while it is queued. */
  submit(op: Op, work: Work): Promise<Outcome> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    const { deadline, origin } = work;
    return new Promise((resolve, reject) => {
      const waiting: Waiting<Op, Outcome> = {
        op,
        size: this.options.sizeOf(op),
        resolve,
        reject,
        deadline,
        forget: undefined,
        origin,
      };
      this.queue.push(waiting);
      // Still queued when its request's deadline passes: it is dropped, unsent (never half done).
      if (deadline !== undefined) waiting.forget = deadline.onExpiry(() => this.drop(waiting));
      this.scheduleSend();
    });
  }

  /** Takes an operation out of the queue, unsent, if it is still there. */
  private drop(waiting: Waiting<Op, Outcome>): void {
    const index = this.queue.indexOf(waiting);
    if (index === -1) return;
    this.queue.splice(index, 1);
    waiting.reject(new DeadlinePassed());
    this.notifyIfDrained();
  }

  /** Refuses new operations, and resolves once every one asked before is answered. */
  close(): Promise<void> {
    this.closed = true;
    return this.drain();
  }

  /** Resolves once nothing is queued or in flight. */
  drain(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.drained.push(resolve));
  }

  /** Fails everything still queued (not what is in flight: its runner answers it). */
  abandonQueued(error: Error): void {
    const abandoned = this.queue;
    this.queue = [];
    for (const waiting of abandoned) waiting.reject(error);
    this.notifyIfDrained();
  }

  // Waiting for the end of this turn of the event loop lets operations that arrived together share
  // the first batch, instead of the first one going alone.
  private scheduleSend(): void {
    if (this.sendScheduled || this.inFlight >= this.options.inFlightMax || this.queue.length === 0)
      return;
    this.sendScheduled = true;
    const send = (): void => {
      this.carrierWait = undefined;
      this.sendScheduled = false;
      this.send(this.run);
    };
    const { carried } = this.options;
    if (carried === undefined) {
      setImmediate(send);
      return;
    }
    setImmediate(() =>
      setImmediate(() => {
        if (this.queue.length > 0 && carried.waiting())
          this.carrierWait = setTimeout(send, carried.waitMs);
        else send();
      }),
    );
  }

  /**
   * Sends what is queued now through `run`, a statement of another batcher that carries it beside
   * its own work (ride-along.ts), instead of through this batcher's own runner. False when nothing
   * is queued or no slot is free: the batcher then sends it itself, as usual.
   */
  sendThrough(run: BatchRunner<Op, Outcome>): boolean {
    if (this.queue.length === 0 || this.inFlight >= this.options.inFlightMax) return false;
    this.send(run);
    // What it left behind (past a batch's bounds) waits for the next carrier afresh.
    if (this.carrierWait !== undefined) {
      clearTimeout(this.carrierWait);
      this.carrierWait = undefined;
      this.sendScheduled = false;
      this.scheduleSend();
    }
    return true;
  }

  private send(run: BatchRunner<Op, Outcome>): void {
    // The queue may have been abandoned, or taken by a carrier (sendThrough) with a slot since
    // scheduleSend checked: the next batch then goes when a slot is free again (settle).
    if (this.queue.length === 0 || this.inFlight >= this.options.inFlightMax) return;
    const batch = this.takeBatch();
    this.inFlight += 1;
    this.inFlightOps += batch.length;
    const sentMs = performance.now();
    let settled: Promise<readonly Settled<Outcome>[]>;
    for (const waiting of batch) waiting.forget?.();
    const ops = batch.map((w) => w.op);
    const traced = this.traced(batch);
    try {
      settled = run(ops, this.options.cancelsStarted === true ? sharedWork(batch) : UNBOUNDED_WORK);
    } catch (error) {
      settled = Promise.reject(error);
    }
    settled.then(
      (results) => this.settle(batch, results, sentMs, traced),
      (error: unknown) =>
        this.settle(
          batch,
          error instanceof Error ? error : new Error(String(error)),
          sentMs,
          traced,
        ),
    );
  }

  /** Tells a tracer of the batch, when one listens and the batch is named: what to call once it is answered. */
  private traced(
    batch: readonly Waiting<Op, Outcome>[],
  ): ((error: Error | undefined) => void) | undefined {
    const { work, observer } = this.options;
    if (work === undefined || observer?.batchStarted === undefined) return undefined;
    return observer.batchStarted({
      system: work.system,
      namespace: work.namespace,
      server: work.server,
      operation: work.operation,
      collection: work.collectionOf(batch.map((w) => w.op)),
      size: batch.length,
      origins: batch.map((w) => w.origin),
    });
  }

  /** The oldest operations, as many as the limits allow (always at least one). */
  private takeBatch(): Waiting<Op, Outcome>[] {
    const { opsMax, bytesMax } = this.options;
    let count = 0;
    let bytes = 0;
    for (const waiting of this.queue) {
      if (count === opsMax || (count > 0 && bytes + waiting.size > bytesMax)) break;
      count += 1;
      bytes += waiting.size;
    }
    if (count === this.queue.length) {
      const all = this.queue;
      this.queue = [];
      return all;
    }
    return this.queue.splice(0, count);
  }

  private settle(
    batch: readonly Waiting<Op, Outcome>[],
    result: readonly Settled<Outcome>[] | Error,
    sentMs: number,
    traced: ((error: Error | undefined) => void) | undefined,
  ): void {
    this.inFlight -= 1;
    this.inFlightOps -= batch.length;
    // Batches are committed one after the other: one sent while another was out began its commit
    // when that one was answered, so the time before is queueing, not committing.
    const nowMs = performance.now();
    const commitMs = nowMs - Math.max(sentMs, this.lastSettledMs);
    this.lastSettledMs = nowMs;
    if (!(result instanceof Error) && result.length !== batch.length) {
      result = new Error(`the database answered ${result.length} of ${batch.length} operations`);
    }
    // The batch's span ends before any of its requests is answered (and so before their spans end).
    traced?.(result instanceof Error ? result : undefined);
    if (result instanceof Error) {
      for (const waiting of batch) waiting.reject(result);
      if (this.options.failsQueued?.(result) === true) this.abandonQueued(result);
    } else {
      this.options.observer?.batchCommitted?.(batch.length, commitMs / 1000);
      this.options.onCommitted?.();
      result.forEach((one, i) => {
        const waiting = batch[i] as Waiting<Op, Outcome>;
        if (one.ok) waiting.resolve(one.outcome);
        else waiting.reject(one.error);
      });
    }
    // What queued meanwhile goes at the end of this turn, with whatever else arrives in it.
    this.scheduleSend();
    this.notifyIfDrained();
  }

  private notifyIfDrained(): void {
    if (this.pending > 0) return;
    const waiting = this.drained;
    this.drained = [];
    for (const resolve of waiting) resolve();
  }
}
