// Group commit, the main thread's half: withdrawals queue here, and whenever no batch is in flight
// the queue goes to the worker as one batch. While the worker waits for the disk, new withdrawals
// gather for the next batch, so the fsyncs per second stay bounded whatever the request rate.
import { Worker } from 'node:worker_threads';
import type { WithdrawOutcome } from './ledger.js';
import { decodeOutcome, type FromWorker, type ToWorker, type WorkerSetup } from './ledger-sqlite-protocol.js';

/** Bounds one transaction's length, and so the wait of the withdrawals queued behind it. */
const BATCH_WITHDRAWALS_MAX = 1024;

interface Waiting {
  readonly account: string;
  readonly amount: number;
  resolve(outcome: WithdrawOutcome): void;
  reject(error: Error): void;
}

export class GroupCommitWithdrawals {
  private readonly worker: Worker;
  private queue: Waiting[] = [];
  private inFlight: readonly Waiting[] | undefined;
  private batchNumber = 0;
  private sendScheduled = false;
  /** Set once the worker is gone: every later withdrawal fails with it. */
  private broken: Error | undefined;
  private closing: Promise<void> | undefined;
  private onDrained: (() => void) | undefined;

  constructor(setup: WorkerSetup) {
    this.worker = new Worker(new URL('./ledger-sqlite-worker.js', import.meta.url), { workerData: setup });
    this.worker.on('message', (message: FromWorker) => this.settle(message));
    this.worker.on('error', (error) => this.fail(error));
    this.worker.on('exit', (code) => {
      if (this.closing === undefined) this.fail(new Error(`the ledger writer stopped (exit code ${code})`));
    });
    // Idle, the worker must not keep the process alive; it is referenced while a batch is out.
    this.worker.unref();
  }

  get healthy(): boolean {
    return this.broken === undefined && this.closing === undefined;
  }

  withdraw(account: string, amount: number): Promise<WithdrawOutcome> {
    if (this.broken !== undefined) return Promise.reject(this.broken);
    if (this.closing !== undefined) return Promise.reject(new Error('the ledger is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ account, amount, resolve, reject });
      this.scheduleSend();
    });
  }

  /** Lets every queued withdrawal finish, then stops the worker, which closes its connection. */
  close(): Promise<void> {
    return (this.closing ??= this.drainAndStop());
  }

  private async drainAndStop(): Promise<void> {
    this.worker.ref();
    if (this.queue.length > 0 || this.inFlight !== undefined) {
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

  // Waiting for the end of this turn of the event loop lets requests that arrived together share
  // the first batch, instead of the first one going alone.
  private scheduleSend(): void {
    if (this.sendScheduled || this.inFlight !== undefined) return;
    this.sendScheduled = true;
    setImmediate(() => {
      this.sendScheduled = false;
      this.sendBatch();
    });
  }

  private sendBatch(): void {
    if (this.inFlight !== undefined || this.queue.length === 0 || this.broken !== undefined) return;
    const batch = this.queue.length <= BATCH_WITHDRAWALS_MAX ? this.queue : this.queue.slice(0, BATCH_WITHDRAWALS_MAX);
    this.queue = batch === this.queue ? [] : this.queue.slice(BATCH_WITHDRAWALS_MAX);
    this.inFlight = batch;
    this.batchNumber += 1;
    this.worker.ref();
    this.post({
      kind: 'batch',
      batch: this.batchNumber,
      accounts: batch.map((w) => w.account),
      amounts: batch.map((w) => w.amount),
    });
  }

  private settle(message: FromWorker): void {
    const batch = this.inFlight;
    if (batch === undefined || message.batch !== this.batchNumber) {
      this.fail(new Error(`the ledger writer answered batch ${message.batch}, ${this.batchNumber} was out`));
      return;
    }
    this.inFlight = undefined;
    if (this.closing === undefined) this.worker.unref();
    if (message.kind === 'committed') {
      if (message.codes.length !== batch.length) {
        this.fail(new Error(`the ledger writer answered ${message.codes.length} of ${batch.length} withdrawals`), batch);
        return;
      }
      for (let i = 0; i < batch.length; i++) (batch[i] as Waiting).resolve(decodeOutcome(message.codes, message.balances, i));
    } else {
      const error = Object.assign(new Error(`withdrawal batch not committed: ${message.message}`), { code: message.code });
      for (const waiting of batch) waiting.reject(error);
    }
    // Whatever queued while the disk worked goes at once: it has waited one batch already.
    this.sendBatch();
    if (this.inFlight === undefined && this.queue.length === 0) this.onDrained?.();
  }

  /** The worker is unusable: nothing queued or in flight can be acknowledged any more. */
  private fail(error: Error, inFlight: readonly Waiting[] | undefined = this.inFlight): void {
    this.broken ??= error;
    const abandoned = [...(inFlight ?? []), ...this.queue];
    this.inFlight = undefined;
    this.queue = [];
    for (const waiting of abandoned) waiting.reject(error);
    this.onDrained?.();
  }

  private post(message: ToWorker): void {
    this.worker.postMessage(message);
  }
}
