// Opening a SQLite database the way every store here needs it: WAL so readers never wait for the
// writer, synchronous=FULL so that a write is on disk before it is acknowledged, a busy timeout so
// that several processes on one file queue instead of failing, and versioned migrations.
import Database from 'better-sqlite3';
import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { runMigrations, type Migration, type MigrationSession } from '../migrations.js';
import { translateSqliteError } from './errors.js';
import { StoreError } from '../store-errors.js';

export type SqliteDatabase = Database.Database;

export interface SqliteOptions {
  /** `:memory:` for a throw-away database. */
  readonly location: string;
  /** Migrations are counted per service, so that both services may share one file. */
  readonly service: string;
  readonly migrations: readonly Migration[];
  /** Runs once, in the transaction that creates the schema, so data is seeded only into a new database. */
  readonly seed: (db: SqliteDatabase) => void;
  /** FULL unless a benchmark measures what durability costs. */
  readonly synchronous?: 'FULL' | 'NORMAL' | 'OFF';
  readonly busyTimeoutMs?: number;
}

/** Opens, checks and migrates; a damaged, unreadable or read-only file fails here with a store error. */
export async function openSqlite(options: SqliteOptions): Promise<SqliteDatabase> {
  try {
    if (options.location !== ':memory:') mkdirSync(dirname(options.location), { recursive: true });
    // The one connection that may create the file: every other opens it once this one migrated it.
    const db = withSettings(
      new Database(options.location),
      options.synchronous,
      options.busyTimeoutMs,
    );
    try {
      checkIntact(db, options.location);
      await migrate(db, options);
    } catch (error) {
      db.close();
      throw error;
    }
    return db;
  } catch (error) {
    throw translateSqliteError(error);
  }
}

/** Up to this size the whole file is checked at start; a larger one gets the header and schema read only. */
export const QUICK_CHECK_BYTES_MAX = 64 * 1024 * 1024;

/**
 * A damaged file stops the start with the reason, rather than failing requests one by one later.
 * Opening has read the header (a bad one is SQLITE_NOTADB); this reads the schema, and for a file
 * small enough to check quickly, every page (quick_check: b-tree structure and records, without
 * the index cross-check of integrity_check, so linear in the file's size).
 */
function checkIntact(db: SqliteDatabase, location: string): void {
  db.prepare('SELECT count(*) FROM sqlite_schema').get();
  if (
    location === ':memory:' ||
    (statSync(location, { throwIfNoEntry: false })?.size ?? 0) > QUICK_CHECK_BYTES_MAX
  )
    return;
  const findings = db.prepare<[], { quick_check: string }>('PRAGMA quick_check(1)').all();
  const first = findings[0]?.quick_check;
  if (first !== 'ok')
    throw new StoreError(
      'corrupt',
      `the database is corrupt: quick_check found "${first ?? 'nothing'}"`,
    );
  // The check read every page into this connection's cache; the store reads afresh from the file.
  db.pragma('shrink_memory');
}

/**
 * A connection with this project's settings, to a database another connection has migrated. It
 * never creates the file: a file gone by the time it opens (deleted under a starting store) is an
 * error here, not a new empty database at the same path.
 */
export function connectSqlite(
  location: string,
  synchronous?: 'FULL' | 'NORMAL' | 'OFF',
  busyTimeoutMs?: number,
): SqliteDatabase {
  return withSettings(
    new Database(location, { fileMustExist: location !== ':memory:' }),
    synchronous,
    busyTimeoutMs,
  );
}

function withSettings(
  db: SqliteDatabase,
  synchronous: 'FULL' | 'NORMAL' | 'OFF' = 'FULL',
  busyTimeoutMs = 5000,
): SqliteDatabase {
  try {
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${synchronous}`);
    db.pragma('foreign_keys = ON');
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

function migrate(db: SqliteDatabase, options: SqliteOptions): Promise<void> {
  const session: MigrationSession = {
    dialect: 'sqlite',
    exec: (sql) => void db.exec(sql),
    all: <R extends object>(sql: string, params: readonly (string | number)[]) =>
      runStatement<R>(db, sql, params),
  };
  return runMigrations(
    {
      session,
      // IMMEDIATE takes the write lock first: instances starting together migrate one after
      // another. Nothing else uses this connection while it opens, so the transaction may span the
      // awaits.
      async locked(work) {
        db.exec('BEGIN IMMEDIATE');
        try {
          await work(session);
          db.exec('COMMIT');
        } catch (error) {
          if (db.inTransaction) db.exec('ROLLBACK');
          throw error;
        }
      },
    },
    { service: options.service, migrations: options.migrations, seed: () => options.seed(db) },
  );
}

function runStatement<R extends object>(
  db: SqliteDatabase,
  sql: string,
  params: readonly (string | number)[],
): R[] {
  const statement = db.prepare<unknown[], R>(sql);
  if (statement.reader) return statement.all(...params);
  statement.run(...params);
  return [];
}

/**
 * For /readyz: the database answers a query that reads it, and (for a file) the file is still the
 * one at its path: a file deleted or replaced under a running service would swallow writes unseen.
 */
export function sqliteResponds(db: SqliteDatabase, location: string): boolean {
  try {
    db.prepare('SELECT count(*) FROM sqlite_schema').get();
    if (location === ':memory:') return true;
    const opened = db
      .prepare<[], { file: string }>("SELECT file FROM pragma_database_list WHERE name = 'main'")
      .get();
    return opened !== undefined && statSync(opened.file, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
}
