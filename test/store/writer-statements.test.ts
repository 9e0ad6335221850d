// The writer thread's statements make no temporary table: SQLite buffers the rows of a RETURNING
// clause in one (an ephemeral table, made and dropped on every run), as it does for an INSERT whose
// SELECT reads the table it inserts into. Each store's writes learn what a statement did from the
// count of rows it changed, or from a value read before in the same transaction.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import type { Migration } from '../../src/db/migrations.js';
import type { SqliteDatabase } from '../../src/db/sqlite/sqlite.js';
import { prepareEntries, type SqliteWrites } from '../../src/db/sqlite/writes.js';
import { TODO_MIGRATIONS, TODO_WRITES } from '../../src/todo/store-sqlite-schema.js';
import { LEDGER_MIGRATIONS, LEDGER_WRITES } from '../../src/bank/ledger-sqlite-schema.js';

/** Every statement a store's writes prepare, with the keyed records beside them. */
function statementsOf<Op, Result, Outcome>(
  migrations: readonly Migration[],
  writes: SqliteWrites<Op, Result, Outcome>,
): { db: SqliteDatabase; sql: string[] } {
  const db = new Database(':memory:');
  for (const migration of migrations) db.exec(migration.sql);
  const sql: string[] = [];
  const watched = new Proxy(db, {
    get(target, property, receiver) {
      if (property === 'prepare')
        return (text: string) => {
          sql.push(text);
          return target.prepare(text);
        };
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function'
        ? (value as (...args: unknown[]) => unknown).bind(target)
        : value;
    },
  });
  prepareEntries(writes)(watched);
  return { db, sql };
}

for (const [store, migrations, writes] of [
  ['to-do', TODO_MIGRATIONS, TODO_WRITES],
  ['ledger', LEDGER_MIGRATIONS, LEDGER_WRITES],
] as const) {
  test(`the ${store} store's writes make no temporary table`, () => {
    const { db, sql } = statementsOf<unknown, unknown, unknown>(
      migrations,
      writes as SqliteWrites<unknown, unknown, unknown>,
    );
    try {
      assert.ok(sql.length > 0);
      // Pruning expired key records deletes a bounded batch of them now and then, not with a write.
      for (const text of sql.filter((t) => !/^DELETE FROM \w+_idempotency_keys /.test(t))) {
        const statement = db.prepare(`EXPLAIN ${text}`);
        const parameters = Array.from({ length: countParameters(text) }, () => null);
        const program = statement.all(...parameters) as { opcode: string }[];
        assert.ok(
          !program.some((step) => step.opcode === 'OpenEphemeral'),
          `a temporary table in: ${text}`,
        );
      }
    } finally {
      db.close();
    }
  });
}

/** The statement's `?` parameters (none of these statements holds a `?` in a literal). */
const countParameters = (text: string): number => text.split('?').length - 1;
