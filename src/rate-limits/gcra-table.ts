// The in-process limiter: GCRA (decision.ts) over a table of one theoretical arrival time per
// client and kind, with the clock passed in, so that tests can drive time exactly.
//
// The table is bounded twice. A row whose time is past means the same as no row (the client has its
// whole burst), so a new row first drops those, at most once a sweep period (sweepEveryMs: a
// quarter of the window): the table holds at most the clients admitted within the last window plus
// that period. And it holds at most rowsMax rows: when every row is a client still within its
// window, it forgets the one whose row was made first, which then starts afresh with its whole
// burst: for that client, and only while the table is full, the bound is then burst more than it
// says.
import { decisionOf, gcra, type Decision } from './decision.js';
import { sweepEveryMs, windowMs, type Rate } from './policy.js';

/** Rows kept at most per kind: about 100 bytes each (a Map entry, an address as key, a number). */
export const CLIENT_ROWS_MAX = 100_000;

export type Clock = () => number;

/**
 * A client's row. Its time is a field written in place: a number stored straight into a long-lived
 * Map would be a new heap number each request, garbage in the old generation once replaced, and
 * the old generation's collections (concurrent marking, sweeping) cost more than the decision.
 */
interface Row {
  tat: number;
}

export class GcraTable {
  private readonly tats = new Map<string, Row>();
  private readonly intervalMs: number;
  /** Past rows are swept out at most this often, so that a flood of new clients costs no sweep each. */
  private readonly sweepEveryMs: number;
  private sweptMs = -Infinity;

  constructor(
    private readonly rate: Rate,
    private readonly clock: Clock,
    private readonly rowsMax = CLIENT_ROWS_MAX,
  ) {
    this.intervalMs = 1000 / rate.perSecond;
    this.sweepEveryMs = sweepEveryMs(windowMs(rate));
  }

  get size(): number {
    return this.tats.size;
  }

  decide(client: string): Decision {
    const nowMs = this.clock();
    const { intervalMs } = this;
    const { burst } = this.rate;
    const row = this.tats.get(client);
    const next = gcra(row?.tat, nowMs, 1, intervalMs, burst);
    if (next.admitted === 1) {
      if (row !== undefined) row.tat = next.tat;
      else {
        if (nowMs - this.sweptMs >= this.sweepEveryMs) this.sweep(nowMs);
        if (this.tats.size >= this.rowsMax) this.forgetFirst();
        this.tats.set(client, { tat: next.tat });
      }
    }
    return decisionOf(next.admitted === 1, next.tat, nowMs, intervalMs, burst);
  }

  /** Drops every row whose time is past: its client has its whole burst, as with no row. */
  private sweep(nowMs: number): void {
    this.sweptMs = nowMs;
    for (const [client, row] of this.tats) if (row.tat <= nowMs) this.tats.delete(client);
  }

  private forgetFirst(): void {
    const oldest = this.tats.keys().next();
    if (oldest.done !== true) this.tats.delete(oldest.value);
  }
}
