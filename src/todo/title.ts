// Titles are stored as JSON string literals. A title may hold a lone surrogate (deviation D7) or a
// NUL character; neither survives as such in SQLite's UTF-8 text or in PostgreSQL's text, but a
// JSON literal keeps both exactly ("\ud800", "\u0000") and stays readable in the database.

export function encodeTitle(title: string): string {
  return JSON.stringify(title);
}

export function decodeTitle(stored: string): string {
  // Most titles need no escape: their literal is the title between quotes. JSON.parse takes such
  // a literal exactly so, and refuses one with a quote, a backslash or a control character inside.
  if (isPlainLiteral(stored)) return stored.slice(1, -1);
  const title: unknown = JSON.parse(stored);
  if (typeof title !== 'string') throw new Error('a stored title is not a JSON string');
  return title;
}

/** `"…"` with no quote, backslash or control character between the quotes. */
function isPlainLiteral(stored: string): boolean {
  const last = stored.length - 1;
  if (last < 1 || stored.charCodeAt(0) !== 0x22 || stored.charCodeAt(last) !== 0x22) return false;
  for (let i = 1; i < last; i++) {
    const c = stored.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c) return false;
  }
  return true;
}
