// A store's view of its database's health, from the outcome of each operation: it decides when the
// store is ready, and says so in the log once per change rather than once per failed request.
//
//   unavailable, busy — passing: ready again with the next operation that succeeds;
//   full, read-only   — writes fail while reads work: not ready until a write succeeds again;
//   saturated         — overload, not an outage: readiness unchanged, a rate-limited warning;
//   corrupt           — not passing: never ready again in this process; an operator must act.
import type { Logger } from '../observe/log.js';
import { StoreError } from './store-errors.js';
import type { StoreObserver } from './store-observer.js';

/** At most one warning per this period for a fault that may repeat per request (busy, saturated). */
const REPEAT_WARNING_MS = 10_000;

export class StoreHealth {
  private down: StoreError | undefined;
  private writesFailing: StoreError | undefined;
  private corrupt: StoreError | undefined;
  private readonly lastWarned = new Map<string, number>();
  private readonly suppressed = new Map<string, number>();

  /** `log` is the service's own logger: its lines already say which service. */
  constructor(
    private readonly log?: Logger,
    private readonly observer?: StoreObserver,
  ) {}

  /** False while the database is down, refuses writes, or is corrupt. */
  get ready(): boolean {
    return (
      this.down === undefined && this.writesFailing === undefined && this.corrupt === undefined
    );
  }

  /** True while the database is unavailable (down, not merely busy or refusing writes). */
  get unavailable(): boolean {
    return this.down !== undefined;
  }

  /** True while writes fail for a lasting reason (disk full, read-only): a probe write may end it. */
  get awaitingWrite(): boolean {
    return this.writesFailing !== undefined;
  }

  failed(error: StoreError): void {
    this.observer?.fault?.(error.fault);
    const reason = error.message;
    switch (error.fault) {
      case 'corrupt':
        if (this.corrupt === undefined) {
          this.log?.error(
            'database is corrupt: answering 500 and not ready; restore it from a backup',
            { code: error.code, reason },
          );
        }
        this.corrupt = error;
        return;
      case 'full':
      case 'read-only':
        if (this.writesFailing?.fault !== error.fault) {
          this.log?.warn(
            `database refuses writes (${error.fault}): writes answer 503 and not ready until one succeeds`,
            { code: error.code, reason },
          );
        }
        this.writesFailing = error;
        return;
      case 'unavailable':
        if (this.down === undefined) {
          this.observer?.outage?.();
          this.log?.warn('database unavailable: answering 503 until it answers again', {
            code: error.code,
            reason,
          });
        }
        this.down = error;
        return;
      case 'busy':
      case 'saturated':
        this.warnAtMostEvery(error, reason);
        return;
    }
  }

  /** An operation succeeded: the database answers; a write also shows that writes work again. */
  succeeded(kind: 'read' | 'write'): void {
    if (this.down !== undefined) {
      this.down = undefined;
      this.log?.info('database available again');
    }
    if (kind === 'write' && this.writesFailing !== undefined) {
      this.writesFailing = undefined;
      this.log?.info('database takes writes again');
    }
  }

  private warnAtMostEvery(error: StoreError, reason: string): void {
    const now = Date.now();
    const last = this.lastWarned.get(error.code);
    if (last !== undefined && now - last < REPEAT_WARNING_MS) {
      this.suppressed.set(error.code, (this.suppressed.get(error.code) ?? 0) + 1);
      return;
    }
    const message =
      error.fault === 'saturated'
        ? 'database connection pool saturated: requests waited too long for a connection (overload, not an outage)'
        : 'database busy: an operation waited too long for a lock';
    this.log?.warn(message, {
      code: error.code,
      reason,
      sinceLastWarning: this.suppressed.get(error.code) ?? 0,
    });
    this.lastWarned.set(error.code, now);
    this.suppressed.set(error.code, 0);
  }
}
