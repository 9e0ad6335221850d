// Runs SQL on a test database by plain clients, not by the stores: for tests that build a database
// as an older build left it.
import Database from 'better-sqlite3';
import pg from 'pg';
import type { FreshDatabase } from './store-backends.js';

export async function runPlainSql(
  fresh: FreshDatabase,
  statements: readonly string[],
): Promise<void> {
  if (fresh.db.kind === 'postgres') {
    const client = new pg.Client({ connectionString: fresh.db.url });
    await client.connect();
    try {
      for (const sql of statements) await client.query(sql);
    } finally {
      await client.end();
    }
  } else if (fresh.db.kind === 'sqlite') {
    const db = new Database(fresh.db.path);
    try {
      for (const sql of statements) db.exec(sql);
    } finally {
      db.close();
    }
  }
}

/** The rows of one query, by a plain client. */
export async function queryPlainSql<Row extends object>(
  fresh: FreshDatabase,
  sql: string,
): Promise<Row[]> {
  if (fresh.db.kind === 'postgres') {
    const client = new pg.Client({ connectionString: fresh.db.url });
    await client.connect();
    try {
      return (await client.query<Row>(sql)).rows;
    } finally {
      await client.end();
    }
  }
  if (fresh.db.kind !== 'sqlite')
    throw new Error(`no plain client for a ${fresh.db.kind} database`);
  const db = new Database(fresh.db.path, { readonly: true });
  try {
    return db.prepare<[], Row>(sql).all();
  } finally {
    db.close();
  }
}
