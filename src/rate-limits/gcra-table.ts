// The in-process limiter: GCRA (decision.ts) over a table of one theoretical arrival time per
// client and kind, with the clock passed in, so that tests can drive time exactly.
//
// The table is bounded by rows. A row whose time is past means the same as no row (the client has
// its whole burst), so a full table first drops those; only when every row is a client still within
// its burst window does it forget the one whose row was made first, which then starts afresh with its whole burst:
// for that client, and only while the table is full, the bound is then burst more than it says.
import { decisionOf, gcra, type Decision } from './decision.js';
import type { Rate } from './policy.js';

/** Rows kept at most per kind: about 100 bytes each (a Map entry, an address as key, a number). */
export const CLIENT_ROWS_MAX = 100_000;

const SWEEP_EVERY_MS = 1000;

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
  /** When past rows were last swept out: at most once a second, so that a flood of new clients costs no sweep each. */
  private sweptMs = -Infinity;

  constructor(
    private readonly rate: Rate,
    private readonly clock: Clock,
    private readonly rowsMax = CLIENT_ROWS_MAX,
  ) {
    this.intervalMs = 1000 / rate.perSecond;
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
        if (this.tats.size >= this.rowsMax) this.makeRoom(nowMs);
        this.tats.set(client, { tat: next.tat });
      }
    }
    return decisionOf(next.admitted === 1, next.tat, nowMs, intervalMs, burst);
  }

  /** Drops every row whose time is past (at most once a second); if that frees none, the row made first. */
  private makeRoom(nowMs: number): void {
    if (nowMs - this.sweptMs >= SWEEP_EVERY_MS) {
      this.sweptMs = nowMs;
      for (const [client, row] of this.tats) if (row.tat <= nowMs) this.tats.delete(client);
      if (this.tats.size < this.rowsMax) return;
    }
    const oldest = this.tats.keys().next();
    if (oldest.done !== true) this.tats.delete(oldest.value);
  }
}
