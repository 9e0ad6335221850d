// Group commit on SQLite, the main thread's half: writes queue in a Batcher (batcher.ts), and each
// batch goes to the writer thread, which runs it as one transaction while this thread's event loop
// goes on serving. The writer answers batches in the order they were sent.
import { Worker } from 'node:worker_threads';
import type { Work } from '../../common/work.js';
import { Batcher, type Settled } from '../batcher.js';
import type { StoreObserver } from '../store-observer.js';
import type { FromWriter, GroupCommitSetup, ToWriter } from './group-commit-protocol.js';
import { sqliteStoreError } from './errors.js';
import { StoreError } from '../store-errors.js';

/** Exported so that tests can go past each limit by exactly as much as they need to. */
export const GROUP_COMMIT_LIMITS = {
  opsMax: 1024,
  /** Writes are small; this only keeps one pathological batch from holding a lot of memory twice. */
  bytesMax: 4 * 1024 * 1024,
  /**
   * Two batches out at once: while the writer thread commits one (and waits for the disk), the
   * next is already there, so the thread goes from one commit to the next without waiting for
   * this thread's turn. The writer commits them one after the other, in order.
   */
  inFlightMax: 2,
};

/**
 * A group commit's writes differ from one another: the batch is a BATCH, of no one statement, and
 * each store's writes change more than one table. The database is the connection's `main`.
 */
const SQLITE_WRITES = {
  system: 'sqlite',
  namespace: 'main',
  server: undefined,
  operation: undefined,
  collectionOf: () => undefined,
} as const;

interface PendingBatch<Outcome> {
  resolve(results: readonly Settled<Outcome>[]): void;
  reject(error: Error): void;
}

export interface GroupCommitOptions<Op> {
  /** An operation's share of a batch's byte bound. */
  readonly sizeOf: (op: Op) => number;
  /** Called when a batch is committed, before any of its writes is acknowledged. */
  readonly onCommitted?: () => void;
  readonly observer?: StoreObserver;
}

export class GroupCommitWriter<Op, Outcome> {
  private readonly worker: Worker;
  private readonly batcher: Batcher<Op, Outcome>;
  /** Batches sent and not yet answered, oldest first, by number. */
  private readonly pending = new Map<number, PendingBatch<Outcome>>();
  private batchNumber = 0;
  /** Set once the writer thread is gone: every later write fails with it. */
  private broken: Error | undefined;
  private closing: Promise<void> | undefined;

  /** `script` is the writer thread's module, one that calls serveGroupCommits(). */
  constructor(script: URL, setup: GroupCommitSetup, options: GroupCommitOptions<Op>) {
    this.worker = new Worker(script, { workerData: setup });
    this.worker.on('message', (message: FromWriter<Outcome>) => {
      // An event handler that throws would take the process down: a reply that cannot be settled
      // breaks the writer instead, and every write still waiting fails with a store error.
      try {
        this.settle(message);
      } catch (error) {
        this.fail(
          new StoreError(
            'unavailable',
            `the database writer's reply could not be settled: ${error instanceof Error ? error.message : String(error)}`,
            error,
          ),
        );
      }
    });
    this.worker.on('error', (error) =>
      this.fail(
        new StoreError('unavailable', `the database writer failed: ${error.message}`, error),
      ),
    );
    this.worker.on('exit', (code) => {
      if (this.closing === undefined)
        this.fail(new StoreError('unavailable', `the database writer stopped (exit code ${code})`));
    });
    // Idle, the writer must not keep the process alive; it is referenced while a batch is out.
    this.worker.unref();
    this.batcher = new Batcher((ops) => this.send(ops), {
      ...GROUP_COMMIT_LIMITS,
      ...options,
      work: SQLITE_WRITES,
    });
  }

  get healthy(): boolean {
    return this.broken === undefined && this.closing === undefined;
  }

  /** Queues the write for the next batch; the deadline of `work` drops it while it is queued. */
  write(op: Op, work: Work): Promise<Outcome> {
    // The writer thread is gone: the store cannot take writes (and /readyz says so) until a
    // restart.
    if (this.broken !== undefined) return Promise.reject(this.broken);
    if (this.closing !== undefined) return Promise.reject(new Error('the store is closed'));
    return this.batcher.submit(op, work);
  }

  /** Lets every queued write finish, then stops the writer thread, which closes its connection. */
  close(): Promise<void> {
    return (this.closing ??= this.drainAndStop());
  }

  private async drainAndStop(): Promise<void> {
    this.worker.ref();
    await this.batcher.drain();
    if (this.broken !== undefined) {
      await this.worker.terminate();
      return;
    }
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.post({ kind: 'close' });
    await exited;
  }

  // Nothing is sent once the writer is broken: write() refuses, and fail() emptied the queue.
  private send(ops: readonly Op[]): Promise<readonly Settled<Outcome>[]> {
    this.batchNumber += 1;
    const batch = this.batchNumber;
    this.worker.ref();
    this.post({ kind: 'batch', batch, ops });
    return new Promise((resolve, reject) => this.pending.set(batch, { resolve, reject }));
  }

  private settle(message: FromWriter<Outcome>): void {
    const oldest = this.pending.keys().next().value;
    const waiter = this.pending.get(message.batch);
    if (waiter === undefined || message.batch !== oldest) {
      this.fail(
        new StoreError(
          'unavailable',
          `the database writer answered batch ${message.batch}, ${String(oldest)} was expected`,
        ),
      );
      return;
    }
    if (message.kind === 'committed') {
      // Read before the batch leaves the list: a reply that cannot be read throws here, and fail()
      // then rejects this batch's writes with the rest.
      const results = message.outcomes.map((outcome): Settled<Outcome> => ({
        ok: true,
        outcome: outcome as Outcome,
      }));
      for (const { index, message: said, code } of message.failures ?? [])
        results[index] = {
          ok: false,
          error: sqliteStoreError(code, said) ?? Object.assign(new Error(said), { code }),
        };
      this.settled(message.batch);
      waiter.resolve(results);
      return;
    }
    this.settled(message.batch);
    // A busy lock, a full disk, a read-only file …: a store error that says which; else a plain
    // error.
    waiter.reject(
      sqliteStoreError(message.code, `batch not committed: ${message.message}`) ??
        Object.assign(new Error(`batch not committed: ${message.message}`), { code: message.code }),
    );
  }

  /** A batch is answered: off the list, and an idle writer no longer keeps the process alive. */
  private settled(batch: number): void {
    this.pending.delete(batch);
    if (this.pending.size === 0 && this.closing === undefined) this.worker.unref();
  }

  /** The writer thread is unusable: nothing queued or in flight can be acknowledged any more. */
  private fail(error: Error): void {
    this.broken ??= error;
    const abandoned = [...this.pending.values()];
    this.pending.clear();
    for (const waiter of abandoned) waiter.reject(error);
    this.batcher.abandonQueued(error);
  }

  private post(message: ToWriter<Op>): void {
    this.worker.postMessage(message);
  }
}
