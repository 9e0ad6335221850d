// The API lifecycle's settings: which operations are deprecated, since when, and when they reach
// their sunset, as --deprecate names them: `METHOD:PATH@DEPRECATED/SUNSET`, the two instants an
// ISO 8601 interval (`2026-01-01T00:00:00Z/2027-01-01T00:00:00Z`), the path the operation's
// template as the documents show it (`/v2/todos/{todo_id}`).
import { ConfigError } from '../../options.js';

export interface Deprecation {
  readonly method: string;
  readonly path: string;
  /** When the operation is (or was) deprecated, in milliseconds since the epoch. */
  readonly deprecatedAtMs: number;
  /** From this instant on, the operation answers 410. */
  readonly sunsetAtMs: number;
}

const METHODS = ['GET', 'POST', 'PUT', 'DELETE'];

/** An instant: a date and a time of day, with its offset from UTC (Z or ±hh:mm). */
const INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2}))$/;

/** The operation's key, as the route table knows it: `GET /v2/todos/{todo_id}`. */
export const operationKey = (method: string, path: string): string => `${method} ${path}`;

export function parseDeprecation(text: string): Deprecation {
  const colon = text.indexOf(':');
  const at = text.lastIndexOf('@');
  const method = text.slice(0, Math.max(colon, 0)).toUpperCase();
  const path = text.slice(colon + 1, at);
  const interval = text.slice(at + 1).split('/');
  if (colon <= 0 || at < colon || !METHODS.includes(method) || !path.startsWith('/'))
    throw refused(
      text,
      'write METHOD:PATH@DEPRECATED/SUNSET, such as GET:/v2/todos/{todo_id}@2026-01-01T00:00:00Z/2027-01-01T00:00:00Z',
    );
  if (interval.length !== 2)
    throw refused(text, 'the dates are an ISO 8601 interval of two instants, DEPRECATED/SUNSET');
  const [deprecatedAtMs, sunsetAtMs] = interval.map((instant) => instantMs(text, instant)) as [
    number,
    number,
  ];
  if (sunsetAtMs < deprecatedAtMs)
    throw refused(text, 'the sunset comes before the deprecation (RFC 9745 §3)');
  return { method, path, deprecatedAtMs, sunsetAtMs };
}

/** Milliseconds since the epoch of an instant written in full, its offset given. */
function instantMs(text: string, instant: string): number {
  const parts = INSTANT.exec(instant);
  const ms = Date.parse(instant);
  // Date.parse takes 2026-02-30 for 2026-03-02: the fields must read back as they were written.
  const valid =
    parts !== null &&
    Number.isFinite(ms) &&
    Number(parts[2]) >= 1 &&
    Number(parts[2]) <= 12 &&
    Number(parts[3]) <= daysIn(Number(parts[1]), Number(parts[2])) &&
    Number(parts[4]) <= 23 &&
    Number(parts[5]) <= 59 &&
    Number(parts[6] ?? 0) <= 59;
  if (!valid)
    throw refused(
      text,
      `"${instant}" is not an instant such as 2026-01-01T00:00:00Z (a date, a time and its offset)`,
    );
  return ms;
}

const daysIn = (year: number, month: number): number =>
  new Date(Date.UTC(year, month, 0)).getUTCDate();

const refused = (text: string, why: string): ConfigError =>
  new ConfigError(`--deprecate "${text}": ${why}`);
