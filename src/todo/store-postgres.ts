// The to-do store on PostgreSQL, safe with several instances on one database. Creating takes a
// transaction-scoped advisory lock, so ids are handed out one at a time: under READ COMMITTED
// each statement sees what committed before it, so MAX(id) + 1 read after the lock is current.
import { openPostgres, type PostgresDatabase, type SqlSession } from '../db/postgres.js';
import type { Migration } from '../db/sqlite.js';
import type { Logger } from '../log.js';
import { exactId, INITIAL_TODO, type Todo, type TodoInput } from './model.js';
import type { FinishOutcome, TodoStore } from './store.js';
import { decodeTitle, encodeTitle } from './title.js';

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `CREATE TABLE todos (
      id BIGINT PRIMARY KEY,
      title TEXT NOT NULL,   -- a JSON string literal, see title.ts
      done BOOLEAN NOT NULL
    )`,
  },
];

/** pg_advisory_xact_lock key that every id-creating write holds: any constant shared by all instances. */
const ID_LOCK = 7_310_002;

interface TitleRow {
  readonly title: string;
  readonly done: boolean;
}

export async function openPostgresTodoStore(url: string, log?: Logger): Promise<TodoStore> {
  const db: PostgresDatabase = await openPostgres({
    url,
    service: 'todo',
    migrations: MIGRATIONS,
    log,
    seed: async (seeding) => {
      await seeding.query('INSERT INTO todos (id, title, done) VALUES ($1, $2, $3)', [
        String(INITIAL_TODO.id),
        encodeTitle(INITIAL_TODO.title),
        INITIAL_TODO.done,
      ]);
    },
  });
  const lockIds = (session: SqlSession) => session.query('SELECT pg_advisory_xact_lock($1)', [ID_LOCK]);

  return {
    async get(id) {
      const { rows } = await db.query<TitleRow>('SELECT title, done FROM todos WHERE id = $1', [id]);
      const row = rows[0];
      return row === undefined ? undefined : toTodo(id, row);
    },
    async create(input) {
      const id = await db.transaction(async (session) => {
        await lockIds(session);
        const { rows } = await session.query<{ id: string }>(
          'INSERT INTO todos (id, title, done) SELECT COALESCE(MAX(id), 0) + 1, $1, $2 FROM todos RETURNING id::text AS id',
          [encodeTitle(input.title), input.done],
        );
        return rows[0]?.id;
      });
      if (id === undefined) throw new Error('INSERT … RETURNING returned no row');
      return { id: exactId(BigInt(id)), title: input.title, done: input.done };
    },
    async replace(id, input: TodoInput) {
      // The lock keeps a PUT of a new id from taking the id a concurrent POST has just computed;
      // ON CONFLICT makes create-or-replace one statement, and xmax = 0 only on a fresh row.
      const created = await db.transaction(async (session) => {
        await lockIds(session);
        const { rows } = await session.query<{ created: boolean }>(
          `INSERT INTO todos (id, title, done) VALUES ($1, $2, $3)
           ON CONFLICT (id) DO UPDATE SET title = EXCLUDED.title, done = EXCLUDED.done
           RETURNING (xmax = 0) AS created`,
          [id, encodeTitle(input.title), input.done],
        );
        return rows[0]?.created;
      });
      if (created === undefined) throw new Error('INSERT … ON CONFLICT … RETURNING returned no row');
      return { todo: { id, title: input.title, done: input.done }, created };
    },
    async remove(id) {
      return (await db.query('DELETE FROM todos WHERE id = $1', [id])).rowCount > 0;
    },
    async finish(id): Promise<FinishOutcome> {
      // One statement: the row is locked as it is read, so "already done" and "missing" are decided
      // on the same row version the update saw (READ COMMITTED would otherwise let a PUT slip between).
      const { rows } = await db.query<{ was_done: boolean | null; title: string | null }>(
        `WITH target AS (SELECT id, done FROM todos WHERE id = $1 FOR UPDATE),
              finished AS (UPDATE todos SET done = true FROM target
                           WHERE todos.id = target.id AND NOT target.done RETURNING todos.title)
         SELECT (SELECT done FROM target) AS was_done, (SELECT title FROM finished) AS title`,
        [id],
      );
      const row = rows[0];
      if (row === undefined || row.was_done === null) return { kind: 'missing' };
      if (row.was_done) return { kind: 'already-done' };
      if (row.title === null) throw new Error('a todo that was not done was not finished');
      return { kind: 'finished', todo: toTodo(id, { title: row.title, done: true }) };
    },
    ping: () => db.ping(),
    close: () => db.close(),
  };
}

function toTodo(id: number, row: TitleRow): Todo {
  return { id, title: decodeTitle(row.title), done: row.done };
}

