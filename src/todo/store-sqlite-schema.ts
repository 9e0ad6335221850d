// The to-do store's SQLite schema and its writes, shared by the in-thread store and the
// group-commit writer thread so that both change data by exactly the same statements.
import { outcomeRecordsSql, recordsTableSql } from '../db/idempotency-records.js';
import type { Migration } from '../db/migrations.js';
import type { SqliteDatabase } from '../db/sqlite/sqlite.js';
import type { SqliteWrites } from '../db/sqlite/writes.js';
import { TODO_ID_MAX, type StoredTodo } from './store.js';
import { decodeTitle } from './title.js';
import { judge, type WriteCondition } from './write-conditions.js';
import { todoOutcome, type TodoOutcome, type TodoWrite, type TodoWriteResult } from './writes.js';

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
    // Every response recorded before was a create's 201, whose body names the id taken.
    version: 3,
    sql: outcomeRecordsSql(
      TODO_KEYS_TABLE,
      'sqlite',
      "CASE WHEN status = 201 THEN json_object('kind', 'created', 'id', json_extract(body, '$.id')) END",
    ),
  },
  {
    // Versions (conditional requests): one counter for the database, bumped by every write, so that
    // an id used again after a delete never shows a version it had before. Items already there
    // take their id as a first version (each a different one), and the counter starts past them.
    version: 4,
    sql: `CREATE TABLE todo_revision (last INTEGER NOT NULL) STRICT;   -- one row
    ALTER TABLE todos ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
    UPDATE todos SET version = id;
    INSERT INTO todo_revision (last) VALUES ((SELECT COALESCE(MAX(version), 0) FROM todos))`,
  },
];

export const TODO_SERVICE = 'todo';

export interface TodoRow {
  readonly title: string;
  readonly done: number;
  readonly version: number;
}

/** An item as the store answers it, from its row (the title decoded). */
export function storedTodo(id: number, row: TodoRow): StoredTodo {
  return { id, title: decodeTitle(row.title), done: row.done === 1, version: row.version };
}

export function prepareTodoRead(db: SqliteDatabase): (id: number) => TodoRow | undefined {
  // One value rather than a row: better-sqlite3 builds a row, as an object or an array, one element
  // at a time from C++, while a single column comes back as a bare string (docs/performance.md).
  // `done` is 0 or 1 (the CHECK), so it is the first character; the version's digits follow, up to
  // the title's JSON literal, which starts with its quote.
  const selectOne = db
    .prepare<[number], string>('SELECT done || version || title FROM todos WHERE id = ?')
    .pluck(true);
  return (id) => {
    const packed = selectOne.get(id);
    if (packed === undefined) return undefined;
    const quote = packed.indexOf('"', 1);
    return {
      title: packed.slice(quote),
      done: packed.charCodeAt(0) === 0x31 ? 1 : 0,
      version: Number(packed.slice(1, quote)),
    };
  };
}

/**
 * A create in one statement: the new id is computed, checked and taken under the same write lock;
 * past TODO_ID_MAX it inserts nothing and returns no row (D11). MAX(id) stands alone in a scalar
 * subquery so that SQLite reads it from the end of the primary key; as a column of a query with a
 * WHERE around it, SQLite scanned the whole table on every create.
 */
export const CREATE_NEXT_SQL = `INSERT INTO todos (id, title, done, version)
  SELECT next.id, ?, ?, ? FROM (SELECT COALESCE((SELECT MAX(id) FROM todos), 0) + 1 AS id) AS next WHERE next.id <= ${TODO_ID_MAX}
  RETURNING id, version`;

/**
 * Applies one write; it must run inside a write transaction (each is atomic only there). A write
 * that changes an item takes the next value of the database's revision counter as its version. A
 * conditional write judges its condition in that same transaction, so no other write, of this
 * process or another on the file, comes between: a replace whose condition one statement can say
 * (If-Match `*` or one version, If-None-Match `*`, a required version) says it in the statement
 * that writes, which changes a row only where the condition holds, and the count of rows it
 * changed is the verdict; the other conditional writes read the item's version first.
 */
export function prepareTodoWrites(db: SqliteDatabase): (write: TodoWrite) => TodoWriteResult {
  const insertNext = db.prepare<[string, number, number], { id: number; version: number }>(
    CREATE_NEXT_SQL,
  );
  const nextVersion = db
    .prepare<[], number>('UPDATE todo_revision SET last = last + 1 RETURNING last')
    .pluck(true);
  const update = db.prepare<[string, number, number, number]>(
    'UPDATE todos SET title = ?, done = ?, version = ? WHERE id = ?',
  );
  const insert = db.prepare<[number, string, number, number]>(
    'INSERT INTO todos (id, title, done, version) VALUES (?, ?, ?, ?)',
  );
  const remove = db.prepare<[number]>('DELETE FROM todos WHERE id = ?');
  const markDone = db.prepare<[number, number], { title: string; version: number }>(
    'UPDATE todos SET done = 1, version = ? WHERE id = ? AND done = 0 RETURNING title, version',
  );
  const state = db.prepare<[number], { done: number; version: number }>(
    'SELECT done, version FROM todos WHERE id = ?',
  );
  // The conditional replaces' statements read the counter's next value as they write, and it is
  // taken (takeVersion) only when they changed a row, so that a refusal takes no version.
  const NEXT = '(SELECT last + 1 FROM todo_revision)';
  const updateExisting = db
    .prepare<[string, number, number], number>(
      `UPDATE todos SET title = ?, done = ?, version = ${NEXT} WHERE id = ? RETURNING version`,
    )
    .pluck(true);
  const updateAt = db
    .prepare<[string, number, number, number], number>(
      `UPDATE todos SET title = ?, done = ?, version = ${NEXT} WHERE id = ? AND version = ? RETURNING version`,
    )
    .pluck(true);
  // The WHERE lets SQLite tell the upsert's ON CONFLICT from a join's ON.
  const insertAbsent = db
    .prepare<[number, string, number], number>(
      'INSERT INTO todos (id, title, done, version) SELECT ?, ?, ?, last + 1 FROM todo_revision WHERE true ON CONFLICT (id) DO NOTHING RETURNING version',
    )
    .pluck(true);
  const takeVersion = db.prepare<[]>('UPDATE todo_revision SET last = last + 1');
  const createNext = (title: string, done: number): TodoWriteResult => {
    const row = insertNext.get(title, done, nextVersion.get() as number);
    return row === undefined
      ? { outcome: 'no-id-left' }
      : { outcome: 'created', id: row.id, version: row.version };
  };
  /** A conditional statement's verdict: the version it wrote (now taken from the counter), or none. */
  const verdictOf = (
    written: number | undefined,
    outcome: 'replaced' | 'created',
    refused: 'stale' | 'version-required',
  ): TodoWriteResult => {
    if (written === undefined) return { outcome: refused };
    takeVersion.run();
    return { outcome, version: written };
  };
  /** A conditional replace in the one statement that says its condition; undefined where none does. */
  const replaceIf = (
    id: number,
    title: string,
    done: number,
    condition: WriteCondition,
  ): TodoWriteResult | undefined => {
    if (condition.kind === 'required')
      return verdictOf(insertAbsent.get(id, title, done), 'created', 'version-required');
    if (condition.kind !== 'versions') return undefined;
    const { ifMatch, ifNoneMatch } = condition;
    if (ifNoneMatch === undefined && ifMatch === 'any')
      return verdictOf(updateExisting.get(title, done, id), 'replaced', 'stale');
    if (
      ifNoneMatch === undefined &&
      ifMatch !== undefined &&
      ifMatch !== 'any' &&
      ifMatch.length === 1
    )
      return verdictOf(updateAt.get(title, done, id, ifMatch[0] as number), 'replaced', 'stale');
    if (ifMatch === undefined && ifNoneMatch === 'any')
      return verdictOf(insertAbsent.get(id, title, done), 'created', 'stale');
    return undefined;
  };

  const replace = (
    id: number,
    title: string,
    done: number,
    condition: WriteCondition,
  ): TodoWriteResult => {
    if (condition.kind !== 'none') {
      const written = replaceIf(id, title, done, condition);
      if (written !== undefined) return written;
      const verdict = judge(condition, state.get(id)?.version);
      if (verdict !== 'go') return { outcome: verdict };
    }
    const version = nextVersion.get() as number;
    if (update.run(title, done, version, id).changes > 0) return { outcome: 'replaced', version };
    insert.run(id, title, done, version);
    return { outcome: 'created', version };
  };
  const removeItem = (id: number, condition: WriteCondition): TodoWriteResult => {
    if (condition.kind !== 'none') {
      const current = state.get(id);
      if (current === undefined) return { outcome: 'missing' };
      const verdict = judge(condition, current.version);
      if (verdict !== 'go') return { outcome: verdict };
    }
    return { outcome: remove.run(id).changes > 0 ? 'removed' : 'missing' };
  };
  const finish = (id: number, condition: WriteCondition): TodoWriteResult => {
    // Read first, even without a condition: a finish that finds nothing to do takes no version.
    const current = state.get(id);
    if (current === undefined) return { outcome: 'missing' };
    if (current.done === 1) return { outcome: 'already-done' };
    const verdict = judge(condition, current.version);
    if (verdict !== 'go') return { outcome: verdict };
    const row = markDone.get(nextVersion.get() as number, id);
    return row === undefined
      ? { outcome: 'already-done' }
      : { outcome: 'finished', title: row.title, version: row.version };
  };

  // done is stored as 0 or 1: SQLite has no boolean.
  return (write) => {
    switch (write.kind) {
      case 'create':
        return createNext(write.title, write.done ? 1 : 0);
      case 'replace':
        return replace(write.id, write.title, write.done ? 1 : 0, write.condition);
      case 'remove':
        return removeItem(write.id, write.condition);
      case 'finish':
        return finish(write.id, write.condition);
    }
  };
}

/** The to-do store's writes, for the scaffold here and in its writer thread (store-sqlite-worker.ts). */
export const TODO_WRITES: SqliteWrites<TodoWrite, TodoWriteResult, TodoOutcome> = {
  prepare: prepareTodoWrites,
  outcome: todoOutcome,
  keys: { table: TODO_KEYS_TABLE },
};
