// The to-do store on SQLite. better-sqlite3 runs each statement to completion, and a write
// transaction holds SQLite's lock, so every method is atomic within and across processes.
import { openSqlite, type Migration, type SqliteDatabase } from '../db/sqlite.js';
import { INITIAL_TODO, type Todo, type TodoId, type TodoInput } from './model.js';
import type { FinishOutcome, TodoStore } from './store.js';
import { decodeTitle, encodeTitle } from './title.js';

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `CREATE TABLE todos (
      id INTEGER PRIMARY KEY,
      title TEXT NOT NULL,   -- a JSON string literal, see title.ts
      done INTEGER NOT NULL CHECK (done IN (0, 1))
    ) STRICT`,
  },
];

interface TitleRow {
  readonly title: string;
  readonly done: number;
}

export function openSqliteTodoStore(location: string, synchronous?: 'FULL' | 'OFF'): TodoStore {
  const db: SqliteDatabase = openSqlite({
    location,
    service: 'todo',
    migrations: MIGRATIONS,
    synchronous,
    seed: (seeding) => {
      seeding.prepare('INSERT INTO todos (id, title, done) VALUES (?, ?, ?)').run(INITIAL_TODO.id, encodeTitle(INITIAL_TODO.title), 0);
    },
  });

  const selectOne = db.prepare<[number], TitleRow>('SELECT title, done FROM todos WHERE id = ?');
  // One statement: the new id is computed and taken under the same write lock.
  const insertNext = db
    .prepare<[string, number], { id: bigint }>(
      'INSERT INTO todos (id, title, done) SELECT COALESCE(MAX(id), 0) + 1, ?, ? FROM todos RETURNING id',
    )
    .safeIntegers(true);
  const update = db.prepare<[string, number, number]>('UPDATE todos SET title = ?, done = ? WHERE id = ?');
  const insert = db.prepare<[number, string, number]>('INSERT INTO todos (id, title, done) VALUES (?, ?, ?)');
  const remove = db.prepare<[number]>('DELETE FROM todos WHERE id = ?');
  const markDone = db.prepare<[number], TitleRow>('UPDATE todos SET done = 1 WHERE id = ? AND done = 0 RETURNING title, done');
  const exists = db.prepare<[number], { one: number }>('SELECT 1 AS one FROM todos WHERE id = ?');

  const replace = db.transaction((id: number, title: string, done: number): boolean => {
    if (update.run(title, done, id).changes > 0) return false;
    insert.run(id, title, done);
    return true;
  });
  const finish = db.transaction((id: number): FinishOutcome => {
    const row = markDone.get(id);
    if (row !== undefined) return { kind: 'finished', todo: toTodo(id, row) };
    return exists.get(id) === undefined ? { kind: 'missing' } : { kind: 'already-done' };
  });

  return {
    async get(id) {
      const row = selectOne.get(id);
      return row === undefined ? undefined : toTodo(id, row);
    },
    async create(input) {
      const row = insertNext.get(encodeTitle(input.title), input.done ? 1 : 0);
      if (row === undefined) throw new Error('INSERT … RETURNING returned no row');
      return { id: exactId(row.id), title: input.title, done: input.done };
    },
    async replace(id, input: TodoInput) {
      const created = replace.immediate(id, encodeTitle(input.title), input.done ? 1 : 0);
      return { todo: { id, title: input.title, done: input.done }, created };
    },
    async remove(id) {
      return remove.run(id).changes > 0;
    },
    async finish(id) {
      return finish.immediate(id);
    },
    async ping() {
      return db.open;
    },
    async close() {
      db.close();
    },
  };
}

function toTodo(id: number, row: TitleRow): Todo {
  return { id, title: decodeTitle(row.title), done: row.done === 1 };
}

function exactId(id: bigint): TodoId {
  return id >= BigInt(Number.MIN_SAFE_INTEGER) && id <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(id) : id;
}
