// The bank's books as the database holds them, read behind the service's back: every balance and
// the sum of its withdrawal journal, so that a test can check initial − journal = balance.
import Database from 'better-sqlite3';
import pg from 'pg';
import type { DbSpec } from '../../src/config.js';

export interface Books {
  readonly balance: number;
  readonly journalTotal: number;
  readonly journalRows: number;
}

const BOOKS_SQL = `SELECT a.name AS name, a.balance AS balance,
    COALESCE((SELECT SUM(w.amount) FROM withdrawals w WHERE w.account = a.name), 0) AS total,
    (SELECT COUNT(*) FROM withdrawals w WHERE w.account = a.name) AS rows
  FROM accounts a`;

interface BooksRow {
  readonly name: string;
  readonly balance: number | string;
  readonly total: number | string;
  readonly rows: number | string;
}

/** The rows of one query, read behind the service's back from a file or PostgreSQL database. */
export async function readRows<Row>(db: DbSpec, sql: string): Promise<readonly Row[]> {
  if (db.kind === 'postgres') {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      return (await client.query(sql)).rows as Row[];
    } finally {
      await client.end();
    }
  }
  if (db.kind === 'sqlite') {
    const file = new Database(db.path, { readonly: true });
    try {
      return file.prepare<[], Row>(sql).all();
    } finally {
      file.close();
    }
  }
  throw new Error('a memory database cannot be read from outside its process');
}

export async function readBooks(db: DbSpec): Promise<Map<string, Books>> {
  const rows = await readRows<BooksRow>(db, BOOKS_SQL);
  return new Map(
    rows.map((row) => [
      row.name,
      {
        balance: Number(row.balance),
        journalTotal: Number(row.total),
        journalRows: Number(row.rows),
      },
    ]),
  );
}

/** Fails unless, for every account, initial − the sum of its journal = its balance. */
export async function assertBooksBalance(
  db: DbSpec,
  initial: ReadonlyMap<string, number>,
): Promise<Map<string, Books>> {
  const books = await readBooks(db);
  for (const [name, start] of initial) {
    const entry = books.get(name);
    if (entry === undefined) throw new Error(`account ${name} is missing`);
    if (start - entry.journalTotal !== entry.balance) {
      throw new Error(
        `${name}: initial ${start} − journal ${entry.journalTotal} ≠ balance ${entry.balance}`,
      );
    }
  }
  return books;
}
