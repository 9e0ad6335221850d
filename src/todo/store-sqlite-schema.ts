// The to-do store's SQLite schema and its writes, shared by the in-thread store and the
// group-commit writer thread so that both change data by exactly the same statements.
import { outcomeRecordsSql, recordsTableSql } from '../db/idempotency-records.js';
import { prepareKeyRecords } from '../db/idempotency-sqlite.js';
import type { Migration } from '../db/migrations.js';
import type { SqliteDatabase } from '../db/sqlite.js';
import type { KeyedOutcome, KeyedWrite } from '../keyed-writes.js';
import { TODO_ID_MAX, type CreateOutcome } from './store.js';

export const TODO_KEYS_TABLE = 'todo_idempotency_keys';

export const TODO_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `CREATE TABLE todos (
      id INTEGER PRIMARY KEY,
      title TEXT NOT NULL,   -- a JSON string literal, see title.ts
      done INTEGER NOT NULL CHECK (done IN (0, 1))
    ) STRICT`,
  },
  { version: 2, sql: recordsTableSql(TODO_KEYS_TABLE, 'INTEGER', ' STRICT', 'answer') },
  {
    // Every answer recorded before was a create's 201, whose body names the id taken.
    version: 3,
    sql: outcomeRecordsSql(TODO_KEYS_TABLE, 'sqlite', "CASE WHEN status = 201 THEN json_object('kind', 'created', 'id', json_extract(body, '$.id')) END"),
  },
];

export const TODO_SERVICE = 'todo';

export interface TodoRow {
  readonly title: string;
  readonly done: number;
}

/** Titles travel already encoded (title.ts), done as 0 or 1. */
export type TodoWrite =
  | { readonly kind: 'create'; readonly title: string; readonly done: number }
  | { readonly kind: 'replace'; readonly id: number; readonly title: string; readonly done: number }
  | { readonly kind: 'remove'; readonly id: number }
  | { readonly kind: 'finish'; readonly id: number }
  | { readonly kind: 'create-once'; readonly title: string; readonly done: number; readonly key: KeyedWrite }
  | { readonly kind: 'prune-keys'; readonly expiredBeforeMs: number };

/** A write's share of a batch's byte bound: its encoded title (at most 3 UTF-8 bytes a UTF-16 unit) and the rest. */
export const todoWriteSize = (write: TodoWrite): number =>
  ('title' in write ? write.title.length * 3 : 0) + ('key' in write ? write.key.key.length + write.key.fingerprint.length : 0) + 32;

export type FinishRow = { readonly kind: 'finished'; readonly row: TodoRow } | { readonly kind: 'missing' } | { readonly kind: 'already-done' };

/** What each write answers: the create, created?, removed?, the finish. */
export interface TodoWriteOutcomes {
  readonly create: CreateOutcome;
  readonly replace: boolean;
  readonly remove: boolean;
  readonly finish: FinishRow;
  readonly 'create-once': KeyedOutcome<CreateOutcome>;
  readonly 'prune-keys': number;
}
export type TodoWriteOutcome = TodoWriteOutcomes[keyof TodoWriteOutcomes];

export function prepareTodoRead(db: SqliteDatabase): (id: number) => TodoRow | undefined {
  // One value rather than a row: better-sqlite3 builds a row, as an object or an array, one element
  // at a time from C++, while a single column comes back as a bare string (in a loop, a point read
  // took 0.50 µs as an array and 0.21 µs as one value). `done` is 0 or 1 (the CHECK), so it is the
  // first character, and the title's JSON literal the rest.
  const selectOne = db.prepare<[number], string>('SELECT done || title FROM todos WHERE id = ?').pluck(true);
  return (id) => {
    const packed = selectOne.get(id);
    return packed === undefined ? undefined : { title: packed.slice(1), done: packed.charCodeAt(0) === 0x31 ? 1 : 0 };
  };
}

/**
 * A create in one statement: the new id is computed, checked and taken under the same write lock;
 * past TODO_ID_MAX it inserts nothing and returns no row (D11). MAX(id) stands alone in a scalar
 * subquery so that SQLite reads it from the end of the primary key; as a column of a query with a
 * WHERE around it, SQLite scanned the whole table on every create.
 */
export const CREATE_NEXT_SQL = `INSERT INTO todos (id, title, done)
  SELECT next.id, ?, ? FROM (SELECT COALESCE((SELECT MAX(id) FROM todos), 0) + 1 AS id) AS next WHERE next.id <= ${TODO_ID_MAX}
  RETURNING id`;

/** Applies one write; it must run inside a write transaction (each is atomic only there). */
export function prepareTodoWrites(db: SqliteDatabase): (write: TodoWrite) => TodoWriteOutcome {
  const insertNext = db.prepare<[string, number], { id: number }>(CREATE_NEXT_SQL);
  const update = db.prepare<[string, number, number]>('UPDATE todos SET title = ?, done = ? WHERE id = ?');
  const insert = db.prepare<[number, string, number]>('INSERT INTO todos (id, title, done) VALUES (?, ?, ?)');
  const remove = db.prepare<[number]>('DELETE FROM todos WHERE id = ?');
  const markDone = db.prepare<[number], TodoRow>('UPDATE todos SET done = 1 WHERE id = ? AND done = 0 RETURNING title, done');
  const exists = db.prepare<[number], { one: number }>('SELECT 1 AS one FROM todos WHERE id = ?');
  const keys = prepareKeyRecords(db, TODO_KEYS_TABLE);
  const createNext = (title: string, done: number): CreateOutcome => {
    const row = insertNext.get(title, done);
    return row === undefined ? { kind: 'no-id-left' } : { kind: 'created', id: row.id };
  };

  return (write) => {
    switch (write.kind) {
      case 'create':
        return createNext(write.title, write.done);
      case 'create-once':
        return keys.find<CreateOutcome>(write.key) ?? keys.record(write.key, createNext(write.title, write.done));
      case 'prune-keys':
        return keys.prune(write.expiredBeforeMs);
      case 'replace':
        if (update.run(write.title, write.done, write.id).changes > 0) return false;
        insert.run(write.id, write.title, write.done);
        return true;
      case 'remove':
        return remove.run(write.id).changes > 0;
      case 'finish': {
        const row = markDone.get(write.id);
        if (row !== undefined) return { kind: 'finished', row };
        return exists.get(write.id) === undefined ? { kind: 'missing' } : { kind: 'already-done' };
      }
    }
  };
}

