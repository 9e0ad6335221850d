// What --rate-limit says: for each kind of request, a steady rate and a burst. Plain data, shared
// by the in-process limiter (gcra.ts), the PostgreSQL one (src/db/postgres/rate-limits.ts) and the
// HTTP layer that reads the client and writes the headers (src/features/rate-limits/gate.ts).

/** Writes are POST, PUT and DELETE; reads are GET and HEAD. */
export type RequestKind = 'writes' | 'reads';

export const REQUEST_KINDS: readonly RequestKind[] = ['writes', 'reads'];

export interface Rate {
  /** Requests per second admitted in the long run. */
  readonly perSecond: number;
  /** Requests admitted at once after a pause: the most a client can send ahead of its rate. */
  readonly burst: number;
}

/** A kind left out is not limited. */
export type RateLimits = Readonly<Partial<Record<RequestKind, Rate>>>;

/**
 * A rate's window: the time in which a whole burst comes back. A client admitted nothing for this
 * long has its whole burst (its time is past): its row is the same as no row.
 */
export const windowMs = (rate: Rate): number => (rate.burst * 1000) / rate.perSecond;

/**
 * How often the limiters' tables drop the rows whose time is past: a quarter of the window, at
 * least 250 ms (a sweep costs a pass over the table) and at most 10 s. A table then holds at most
 * the clients admitted within the last window plus this.
 */
export function sweepEveryMs(longestWindowMs: number): number {
  return Math.min(10_000, Math.max(250, longestWindowMs / 4));
}

/** The highest rate and burst the option takes: past them a limit protects nothing. */
export const RATE_PER_SECOND_MAX = 1_000_000;
export const BURST_MAX = 1_000_000;

const PART = /^(writes|reads)=(\d{1,7}(?:\.\d{1,3})?)\/s:(\d{1,7})$/;

/** `writes=RATE/s:BURST,reads=RATE/s:BURST` (either part may be left out), or why not. */
export function parseRateLimits(text: string): RateLimits | string {
  const limits: Partial<Record<RequestKind, Rate>> = {};
  for (const part of text.split(',')) {
    const match = PART.exec(part.trim());
    if (match === null)
      return `"${part}" is not writes=RATE/s:BURST or reads=RATE/s:BURST (for example writes=20/s:40)`;
    const kind = match[1] as RequestKind;
    const perSecond = Number(match[2]);
    const burst = Number(match[3]);
    if (limits[kind] !== undefined) return `${kind} is given twice`;
    if (!(perSecond > 0 && perSecond <= RATE_PER_SECOND_MAX))
      return `the rate of ${kind} must be above 0 and at most ${RATE_PER_SECOND_MAX}/s`;
    if (!(burst >= 1 && burst <= BURST_MAX))
      return `the burst of ${kind} must be from 1 to ${BURST_MAX}`;
    limits[kind] = { perSecond, burst };
  }
  return limits;
}

/** The kind of a request by its method; undefined for a method no limited route takes. */
export function kindOf(method: string): RequestKind | undefined {
  switch (method) {
    case 'GET':
    case 'HEAD':
      return 'reads';
    case 'POST':
    case 'PUT':
    case 'DELETE':
      return 'writes';
    default:
      return undefined;
  }
}
