// The wait for a pooled PostgreSQL connection, kept apart from connecting. pg-pool bounds both with
// one time-out, so a burst that merely queues looked like a database that does not answer. Here at
// most `size` operations hold a connection; the others wait in order, each up to `waitMs`, and one
// that waits longer fails as saturation (a StoreError of fault 'saturated'), never as an outage.
import { performance } from 'node:perf_hooks';
import { DeadlinePassed } from '../../common/deadline.js';
import type { Work } from '../../common/work.js';
import { StoreError } from '../store-errors.js';

export interface PoolUsage {
  readonly inUse: number;
  readonly waiting: number;
  readonly size: number;
}

interface Waiter {
  readonly since: number;
  readonly grant: (release: () => void) => void;
  readonly timer: NodeJS.Timeout;
  /** Stops watching the request's deadline once the turn is given. */
  forget: (() => void) | undefined;
}

export interface PoolGateOptions {
  readonly size: number;
  readonly waitMs: number;
  /** After each change of the gate's state. */
  readonly onUsage?: (usage: PoolUsage) => void;
  /** When an operation gets its turn, with how long it waited (0 when a connection was free). */
  readonly onWaited?: (waitedMs: number) => void;
}

export class PoolGate {
  private inUse = 0;
  private readonly waiters: Waiter[] = [];
  /** Index of the first live waiter: shifting a long array one by one would cost O(n²) in a burst. */
  private head = 0;

  constructor(private readonly options: PoolGateOptions) {}

  get usage(): PoolUsage {
    return { inUse: this.inUse, waiting: this.waiters.length - this.head, size: this.options.size };
  }

  /**
   * The length of the queue's array, waiters already served included: read-only, for the test that
   * checks that compacting the queue keeps it bounded however many waits the gate has served.
   */
  get queueSlots(): number {
    return this.waiters.length;
  }

  /**
   * Resolves with the function that gives the turn back; rejects with a saturated StoreError after
   * waitMs, or with DeadlinePassed if the deadline of `work` passes first (the waiter then leaves
   * the queue).
   */
  acquire(work: Work): Promise<() => void> {
    if (this.inUse < this.options.size && this.head === this.waiters.length) {
      this.inUse += 1;
      this.options.onWaited?.(0);
      this.report();
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const since = performance.now();
      const leave = (error: Error): void => {
        const index = this.waiters.indexOf(waiter, this.head);
        if (index === -1) return;
        this.waiters.splice(index, 1);
        clearTimeout(waiter.timer);
        waiter.forget?.();
        this.report();
        reject(error);
      };
      const waiter: Waiter = {
        since,
        grant: resolve,
        timer: setTimeout(
          () =>
            leave(
              new StoreError(
                'saturated',
                `no pooled connection came free within ${this.options.waitMs} ms (pool size ${this.options.size})`,
              ),
            ),
          this.options.waitMs,
        ),
        forget: undefined,
      };
      this.waiters.push(waiter);
      const { deadline } = work;
      if (deadline !== undefined)
        waiter.forget = deadline.onExpiry(() => leave(new DeadlinePassed()));
      this.report();
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.next();
    };
  }

  /** A turn was given back: it passes straight to the oldest waiter, if any. */
  private next(): void {
    const waiter = this.waiters[this.head];
    if (waiter === undefined) {
      this.inUse -= 1;
      this.report();
      return;
    }
    this.head += 1;
    if (this.head > 1024 && this.head * 2 > this.waiters.length) {
      this.waiters.splice(0, this.head);
      this.head = 0;
    }
    clearTimeout(waiter.timer);
    waiter.forget?.();
    this.options.onWaited?.(performance.now() - waiter.since);
    this.report();
    waiter.grant(this.releaser());
  }

  private report(): void {
    this.options.onUsage?.(this.usage);
  }
}
