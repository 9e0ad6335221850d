// Opening a SQLite database the way every store here needs it: WAL so readers never wait for the
// writer, synchronous=FULL so that a write is on disk before it is acknowledged, a busy timeout so
// that several processes on one file queue instead of failing, and versioned migrations.
import Database from 'better-sqlite3';
import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

export type SqliteDatabase = Database.Database;

export interface Migration {
  readonly version: number;
  readonly sql: string;
}

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

export function openSqlite(options: SqliteOptions): SqliteDatabase {
  if (options.location !== ':memory:') mkdirSync(dirname(options.location), { recursive: true });
  const db = new Database(options.location);
  db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
  db.pragma('foreign_keys = ON');
  migrate(db, options);
  return db;
}

function migrate(db: SqliteDatabase, options: SqliteOptions): void {
  const steps = [...options.migrations].sort((a, b) => a.version - b.version);
  // IMMEDIATE takes the write lock first: instances starting together migrate one after another.
  db.transaction(() => {
    db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (service TEXT NOT NULL, version INTEGER NOT NULL, PRIMARY KEY (service, version)) STRICT');
    const row = db
      .prepare<[string], { version: number | null }>('SELECT MAX(version) AS version FROM schema_migrations WHERE service = ?')
      .get(options.service);
    const current = row?.version ?? 0;
    const record = db.prepare<[string, number]>('INSERT INTO schema_migrations (service, version) VALUES (?, ?)');
    for (const step of steps) {
      if (step.version <= current) continue;
      db.exec(step.sql);
      record.run(options.service, step.version);
    }
    if (current === 0) options.seed(db);
  }).immediate();
}

/**
 * For /readyz: the database answers a query that reads it, and (for a file) the file is still the
 * one at its path: a file deleted or replaced under a running service would swallow writes unseen.
 */
export function sqliteAnswers(db: SqliteDatabase, location: string): boolean {
  try {
    db.prepare('SELECT count(*) FROM sqlite_schema').get();
    if (location === ':memory:') return true;
    const opened = db.prepare<[], { file: string }>("SELECT file FROM pragma_database_list WHERE name = 'main'").get();
    return opened !== undefined && statSync(opened.file, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
}
