// The time as SQLite's strftime('%Y-%m-%dT%H:%M:%fZ', 'now') writes it, for a column written by
// the hundreds a second: the text is made again only when the millisecond changes.

/** A clock that answers the current time in ISO 8601 with milliseconds, UTC ("2026-11-25T17:30:00.123Z"). */
export function isoMilliseconds(clock: () => number = Date.now): () => string {
  let lastMs = Number.NaN;
  let lastText = '';
  return () => {
    const ms = clock();
    if (ms !== lastMs) {
      lastMs = ms;
      lastText = new Date(ms).toISOString();
    }
    return lastText;
  };
}
