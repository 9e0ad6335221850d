// The to-do store's SQLite schema and its writes, shared by the in-thread store and the
// group-commit writer thread so that both change data by exactly the same statements.
import { outcomeRecordsSql, recordsTableSql } from '../db/idempotency-records.js';
import type { Migration } from '../db/migrations.js';
import type { SqliteDatabase } from '../db/sqlite/sqlite.js';
import type { SqliteWrites, StoreBatchWrites } from '../db/sqlite/writes.js';
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

/** The largest id, which SQLite reads from the end of the primary key, never scanning the table. */
export const LARGEST_ID_SQL = 'SELECT MAX(id) FROM todos';

/**
 * Applies the writes of a batch (batch-writes.ts); each must run inside the batch's write
 * transaction (each is atomic only there). A write that changes an item takes the next value of
 * the database's revision counter as its version: the counter is read once at the start of the
 * batch, under the write lock (another process may write the same file between batches), counted
 * up in memory, and written once at its end. No statement here has a RETURNING clause: SQLite
 * buffers returned rows in a temporary table made for every run, while what a statement did is
 * known without it under the write lock: the count of rows it changed, or a value read before in
 * the same transaction.
 *
 * A create's id is the largest id plus one, read from the end of the primary key; past
 * TODO_ID_MAX nothing is inserted (D11). The largest id is read once and kept until a write that
 * may change it other than a create.
 *
 * A conditional write judges its condition in that same transaction, so no other write, of this
 * process or another on the file, comes between: a replace whose condition one statement can say
 * (If-Match `*` or one version, If-None-Match `*`, a required version) says it in the statement
 * that writes, which changes a row only where the condition holds, and the count of rows it
 * changed is the verdict (a refusal takes no version); the other conditional writes read the
 * item's version first.
 */
export function prepareTodoWrites(
  db: SqliteDatabase,
): StoreBatchWrites<TodoWrite, TodoWriteResult> {
  const readRevision = db.prepare<[], number>('SELECT last FROM todo_revision').pluck(true);
  const writeRevision = db.prepare<[number]>('UPDATE todo_revision SET last = ?');
  const largestId = db.prepare<[], number | null>(LARGEST_ID_SQL).pluck(true);
  const update = db.prepare<[string, number, number, number]>(
    'UPDATE todos SET title = ?, done = ?, version = ? WHERE id = ?',
  );
  const updateAt = db.prepare<[string, number, number, number, number]>(
    'UPDATE todos SET title = ?, done = ?, version = ? WHERE id = ? AND version = ?',
  );
  const insert = db.prepare<[number, string, number, number]>(
    'INSERT INTO todos (id, title, done, version) VALUES (?, ?, ?, ?)',
  );
  const insertAbsent = db.prepare<[number, string, number, number]>(
    'INSERT INTO todos (id, title, done, version) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING',
  );
  const remove = db.prepare<[number]>('DELETE FROM todos WHERE id = ?');
  const markDone = db.prepare<[number, number]>(
    'UPDATE todos SET done = 1, version = ? WHERE id = ? AND done = 0',
  );
  const state = db.prepare<[number], { done: number; version: number }>(
    'SELECT done, version FROM todos WHERE id = ?',
  );
  const stateAndTitle = db.prepare<[number], { done: number; version: number; title: string }>(
    'SELECT done, version, title FROM todos WHERE id = ?',
  );

  /** The revision counter's value in this transaction, and the value the database holds. */
  let revision = 0;
  let stored = 0;
  /** The largest id in this transaction, once read; undefined when it must be read again. */
  let largest: number | undefined;
  const begin = (): void => {
    revision = readRevision.get() as number;
    stored = revision;
    largest = undefined;
  };
  const end = (): void => {
    if (revision !== stored) writeRevision.run(revision);
    stored = revision;
  };

  const createNext = (title: string, done: number): TodoWriteResult => {
    const id = (largest ?? largestId.get() ?? 0) + 1;
    if (id > TODO_ID_MAX) {
      largest = id - 1;
      return { outcome: 'no-id-left' };
    }
    const version = revision + 1;
    insert.run(id, title, done, version);
    revision = version;
    largest = id;
    return { outcome: 'created', id, version };
  };
  /** A conditional statement's verdict from the rows it changed: the version it wrote (the counter's next), or its refusal. */
  const verdictOf = (
    changes: number,
    outcome: 'replaced' | 'created',
    refused: 'stale' | 'version-required',
  ): TodoWriteResult => {
    if (changes === 0) return { outcome: refused };
    revision += 1;
    if (outcome === 'created') largest = undefined;
    return { outcome, version: revision };
  };
  /** A conditional replace in the one statement that says its condition; undefined where none does. */
  const replaceIf = (
    id: number,
    title: string,
    done: number,
    condition: WriteCondition,
  ): TodoWriteResult | undefined => {
    const next = revision + 1;
    if (condition.kind === 'required')
      return verdictOf(
        insertAbsent.run(id, title, done, next).changes,
        'created',
        'version-required',
      );
    if (condition.kind !== 'versions') return undefined;
    const { ifMatch, ifNoneMatch } = condition;
    if (ifNoneMatch === undefined && ifMatch === 'any')
      return verdictOf(update.run(title, done, next, id).changes, 'replaced', 'stale');
    if (
      ifNoneMatch === undefined &&
      ifMatch !== undefined &&
      ifMatch !== 'any' &&
      ifMatch.length === 1
    )
      return verdictOf(
        updateAt.run(title, done, next, id, ifMatch[0] as number).changes,
        'replaced',
        'stale',
      );
    if (ifMatch === undefined && ifNoneMatch === 'any')
      return verdictOf(insertAbsent.run(id, title, done, next).changes, 'created', 'stale');
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
    const version = revision + 1;
    if (update.run(title, done, version, id).changes > 0) {
      revision = version;
      return { outcome: 'replaced', version };
    }
    insert.run(id, title, done, version);
    revision = version;
    largest = undefined;
    return { outcome: 'created', version };
  };
  const removeItem = (id: number, condition: WriteCondition): TodoWriteResult => {
    if (condition.kind !== 'none') {
      const current = state.get(id);
      if (current === undefined) return { outcome: 'missing' };
      const verdict = judge(condition, current.version);
      if (verdict !== 'go') return { outcome: verdict };
    }
    if (remove.run(id).changes === 0) return { outcome: 'missing' };
    largest = undefined;
    return { outcome: 'removed' };
  };
  const finish = (id: number, condition: WriteCondition): TodoWriteResult => {
    // Read first, even without a condition: a finish that finds nothing to do takes no version.
    const current = stateAndTitle.get(id);
    if (current === undefined) return { outcome: 'missing' };
    if (current.done === 1) return { outcome: 'already-done' };
    const verdict = judge(condition, current.version);
    if (verdict !== 'go') return { outcome: verdict };
    const version = revision + 1;
    if (markDone.run(version, id).changes === 0) return { outcome: 'already-done' };
    revision = version;
    return { outcome: 'finished', title: current.title, version };
  };

  // done is stored as 0 or 1: SQLite has no boolean.
  const apply = (write: TodoWrite): TodoWriteResult => {
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
  return { begin, apply, end };
}

/** The to-do store's writes, for the scaffold here and in its writer thread (store-sqlite-worker.ts). */
export const TODO_WRITES: SqliteWrites<TodoWrite, TodoWriteResult, TodoOutcome> = {
  prepare: prepareTodoWrites,
  outcome: todoOutcome,
  keys: { table: TODO_KEYS_TABLE },
};
