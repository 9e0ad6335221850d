// Group commit, the main thread's half: writes queue here, and whenever no batch is in flight the
// queue goes to the writer thread as one batch. While that thread waits for the disk, new writes
// gather for the next batch, so the fsyncs per second stay bounded whatever the request rate.
import { Worker } from 'node:worker_threads';
import { ServiceUnavailableError } from '../http/errors.js';
import type { FromWriter, GroupCommitSetup, ToWriter } from './group-commit-protocol.js';

/** Bounds one transaction's length, and so the wait of the writes queued behind it. */
const BATCH_OPS_MAX = 1024;
/**
 * Two batches out at once: while the writer thread commits one (and waits for the disk), the next
 * is already there, so the thread goes from one commit to the next without waiting for this
 * thread's turn. The writer commits them one after the other, in order.
 */
const BATCHES_IN_FLIGHT_MAX = 2;

interface Waiting<Op, Outcome> {
  readonly op: Op;
  resolve(outcome: Outcome): void;
  reject(error: Error): void;
}

export interface GroupCommitOptions {
  /** Called when a batch is committed, before any of its writes is acknowledged. */
  readonly onCommitted?: () => void;
}

export class GroupCommitWriter<Op, Outcome> {
  private readonly worker: Worker;
  private queue: Waiting<Op, Outcome>[] = [];
  /** Batches sent and not yet answered, oldest first; the writer answers them in this order. */
  private inFlight: (readonly Waiting<Op, Outcome>[])[] = [];
  /** The number of the newest batch sent; the oldest in flight is batchNumber - inFlight.length + 1. */
  private batchNumber = 0;
  private sendScheduled = false;
  /** Set once the writer thread is gone: every later write fails with it. */
  private broken: Error | undefined;
  private closing: Promise<void> | undefined;
  private onDrained: (() => void) | undefined;

  /** `script` is the writer thread's module, one that calls serveGroupCommits(). */
  constructor(
    script: URL,
    setup: GroupCommitSetup,
    private readonly options: GroupCommitOptions = {},
  ) {
    this.worker = new Worker(script, { workerData: setup });
    this.worker.on('message', (message: FromWriter<Outcome>) => this.settle(message));
    this.worker.on('error', (error) => this.fail(error));
    this.worker.on('exit', (code) => {
      if (this.closing === undefined) this.fail(new Error(`the database writer stopped (exit code ${code})`));
    });
    // Idle, the writer must not keep the process alive; it is referenced while a batch is out.
    this.worker.unref();
  }

  get healthy(): boolean {
    return this.broken === undefined && this.closing === undefined;
  }

  write(op: Op): Promise<Outcome> {
    // The writer thread is gone: the store cannot take writes (and /readyz says so) until a restart.
    if (this.broken !== undefined) return Promise.reject(new ServiceUnavailableError());
    if (this.closing !== undefined) return Promise.reject(new Error('the store is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ op, resolve, reject });
      this.scheduleSend();
    });
  }

  /** Lets every queued write finish, then stops the writer thread, which closes its connection. */
  close(): Promise<void> {
    return (this.closing ??= this.drainAndStop());
  }

  private async drainAndStop(): Promise<void> {
    this.worker.ref();
    if (this.queue.length > 0 || this.inFlight.length > 0) {
      await new Promise<void>((resolve) => (this.onDrained = resolve));
    }
    if (this.broken !== undefined) {
      await this.worker.terminate();
      return;
    }
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.post({ kind: 'close' });
    await exited;
  }

  // Waiting for the end of this turn of the event loop lets writes that arrived together share
  // the first batch, instead of the first one going alone.
  private scheduleSend(): void {
    if (this.sendScheduled || this.inFlight.length >= BATCHES_IN_FLIGHT_MAX || this.queue.length === 0) return;
    this.sendScheduled = true;
    setImmediate(() => {
      this.sendScheduled = false;
      this.sendBatch();
    });
  }

  private sendBatch(): void {
    if (this.inFlight.length >= BATCHES_IN_FLIGHT_MAX || this.queue.length === 0 || this.broken !== undefined) return;
    const batch = this.queue.length <= BATCH_OPS_MAX ? this.queue : this.queue.slice(0, BATCH_OPS_MAX);
    this.queue = batch === this.queue ? [] : this.queue.slice(BATCH_OPS_MAX);
    this.inFlight.push(batch);
    this.batchNumber += 1;
    this.worker.ref();
    this.post({ kind: 'batch', batch: this.batchNumber, ops: batch.map((w) => w.op) });
  }

  private settle(message: FromWriter<Outcome>): void {
    const oldest = this.batchNumber - this.inFlight.length + 1;
    const batch = this.inFlight.shift();
    if (batch === undefined || message.batch !== oldest) {
      this.fail(new Error(`the database writer answered batch ${message.batch}, ${oldest} was expected`), batch);
      return;
    }
    if (this.inFlight.length === 0 && this.closing === undefined) this.worker.unref();
    if (message.kind === 'committed') {
      if (message.results.length !== batch.length) {
        this.fail(new Error(`the database writer answered ${message.results.length} of ${batch.length} writes`), batch);
        return;
      }
      this.options.onCommitted?.();
      message.results.forEach((result, i) => {
        const waiting = batch[i] as Waiting<Op, Outcome>;
        if (result.ok) waiting.resolve(result.outcome);
        else waiting.reject(Object.assign(new Error(result.message), { code: result.code }));
      });
    } else {
      // Another process holding the write lock past the busy timeout is a passing condition: 503.
      const busy = message.code !== undefined && /^SQLITE_(BUSY|LOCKED)/.test(message.code);
      const error = busy
        ? new ServiceUnavailableError()
        : Object.assign(new Error(`batch not committed: ${message.message}`), { code: message.code });
      for (const waiting of batch) waiting.reject(error);
    }
    // What queued meanwhile goes at the end of this turn, with whatever else arrives in it.
    this.scheduleSend();
    if (this.inFlight.length === 0 && this.queue.length === 0) this.onDrained?.();
  }

  /** The writer thread is unusable: nothing queued or in flight can be acknowledged any more. */
  private fail(error: Error, answered: readonly Waiting<Op, Outcome>[] = []): void {
    this.broken ??= error;
    const abandoned = [...answered, ...this.inFlight.flat(), ...this.queue];
    this.inFlight = [];
    this.queue = [];
    for (const waiting of abandoned) waiting.reject(error);
    this.onDrained?.();
  }

  private post(message: ToWriter<Op>): void {
    this.worker.postMessage(message);
  }
}
