// Titles are stored as JSON string literals. A title may hold a lone surrogate (deviation D7) or a
// NUL character; neither survives as such in SQLite's UTF-8 text or in PostgreSQL's text, but a
// JSON literal keeps both exactly ("\ud800", "\u0000") and stays readable in the database.

export function encodeTitle(title: string): string {
  return JSON.stringify(title);
}

export function decodeTitle(stored: string): string {
  const title: unknown = JSON.parse(stored);
  if (typeof title !== 'string') throw new Error('a stored title is not a JSON string');
  return title;
}
