// Which failures of SQLite are the database's fault (see store-errors.ts), by SQLite's result code.
// better-sqlite3 reports the extended code (SQLITE_IOERR_WRITE, SQLITE_READONLY_DBMOVED …), so
// each family is matched by its prefix. Anything else (a constraint, a bug) is left as it is.
import { StoreError } from '../store-errors.js';

type Classified = (message: string, cause: unknown) => StoreError;

const FAMILIES: readonly (readonly [string, Classified])[] = [
  ['SQLITE_CORRUPT', (m, c) => new StoreError('corrupt', `the database is corrupt: ${m}`, c)],
  ['SQLITE_NOTADB', (m, c) => new StoreError('corrupt', `the database is corrupt: ${m}`, c)],
  ['SQLITE_FULL', (m, c) => new StoreError('full', `the database's disk is full: ${m}`, c)],
  ['SQLITE_READONLY', (m, c) => new StoreError('read-only', `the database is read-only: ${m}`, c)],
  [
    'SQLITE_BUSY',
    (m, c) => new StoreError('busy', `the database is locked by another writer: ${m}`, c),
  ],
  [
    'SQLITE_LOCKED',
    (m, c) => new StoreError('busy', `the database is locked by another writer: ${m}`, c),
  ],
  ['SQLITE_IOERR', (m, c) => new StoreError('unavailable', `the database's disk failed: ${m}`, c)],
  [
    'SQLITE_CANTOPEN',
    (m, c) => new StoreError('unavailable', `the database file cannot be opened: ${m}`, c),
  ],
  [
    'SQLITE_PERM',
    (m, c) => new StoreError('unavailable', `the database file may not be accessed: ${m}`, c),
  ],
  ['SQLITE_NOMEM', (m, c) => new StoreError('unavailable', `SQLite ran out of memory: ${m}`, c)],
];

/** The store error for a SQLite failure with this code, or undefined when it is not the database's fault. */
export function sqliteStoreError(
  code: string | undefined,
  message: string,
  cause?: unknown,
): StoreError | undefined {
  if (code === undefined) return undefined;
  for (const [prefix, make] of FAMILIES) {
    // The primary code, or one of its extended codes (SQLITE_IOERR_FSYNC, SQLITE_READONLY_DBMOVED
    // …).
    if (code === prefix || code.startsWith(`${prefix}_`)) return make(message, cause);
  }
  return undefined;
}

/** A store error for a thrown SQLite failure; any other error unchanged. */
export function translateSqliteError(error: unknown): unknown {
  if (error instanceof StoreError || !(error instanceof Error)) return error;
  const code = (error as { code?: unknown }).code;
  return (
    sqliteStoreError(typeof code === 'string' ? code : undefined, error.message, error) ?? error
  );
}
