// A limiter's answer for one request, the same whichever limiter gave it (in process or shared).

export interface Decision {
  readonly admitted: boolean;
  /** Requests the client may still send at once, after this one. */
  readonly remaining: number;
  /**
   * Milliseconds until `remaining` next grows by one (0 when the whole burst is left): until then
   * no more than `remaining` are admitted. RateLimit's `t` is this, and a refusal's Retry-After.
   */
  readonly growsInMs: number;
  /** Refused: milliseconds until a request of this kind would be admitted (0 when admitted). */
  readonly retryAfterMs: number;
}

/**
 * GCRA's decision for `count` requests arriving together at `nowMs` against the client's
 * theoretical arrival time `tat` (undefined: no row, which means the same as a time in the past):
 * how many of them are admitted, and the time to keep. Each admitted request moves the time on by
 * the emission interval; a request is admitted while the time stays within `burst` intervals of
 * now. So, over any span of T ms, at most burst + T / interval requests are admitted. The
 * PostgreSQL limiter computes the same in SQL (src/db/postgres/rate-limits.ts).
 */
export function gcra(
  tat: number | undefined,
  nowMs: number,
  count: number,
  intervalMs: number,
  burst: number,
): { readonly admitted: number; readonly tat: number } {
  const base = tat === undefined || tat < nowMs ? nowMs : tat;
  const room = Math.floor((nowMs + burst * intervalMs - base) / intervalMs + 1e-9);
  const admitted = Math.max(0, Math.min(count, room));
  return { admitted, tat: admitted === 0 ? base : base + admitted * intervalMs };
}

/** The decision for one request, after gcra() answered for it. */
export function decisionOf(
  admitted: boolean,
  tat: number,
  nowMs: number,
  intervalMs: number,
  burst: number,
): Decision {
  // The room left: how far the time may still move on before a request is refused.
  const roomMs = burst * intervalMs - Math.max(0, tat - nowMs);
  const remaining = Math.max(0, Math.floor(roomMs / intervalMs + 1e-9));
  // One more fits once the room reaches remaining + 1 intervals: the time must fall back that much.
  const growsInMs = remaining >= burst ? 0 : Math.max(0, (remaining + 1) * intervalMs - roomMs);
  return { admitted, remaining, growsInMs, retryAfterMs: admitted ? 0 : growsInMs };
}
