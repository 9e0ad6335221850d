// The to-do store on PostgreSQL, safe with several instances on one database, on the scaffold of
// src/db/postgres-store.ts. Writes are group-committed: a batch of them is one call of
// todo_write_batch, which takes a transaction-scoped advisory lock and applies them in the order
// asked. Every batch of every instance holds that lock, so ids are handed out one batch at a time
// (under READ COMMITTED each statement sees what committed before it, so MAX(id) + 1 read after
// the lock is current), and no two batches ever lock rows in opposite orders. Reads that arrive
// together share one query. Keyed creates share the batch: a batch that holds any is one
// transaction that claims their keys, applies every write that may run with the same function, and
// records the keyed ones' outcomes before its one commit.
import { outcomeRecordsSql, recordsTableSql } from '../db/idempotency-records.js';
import { claimKeysFunctionSql } from '../db/idempotency-postgres.js';
import type { Migration } from '../db/migrations.js';
import { openPostgresStore } from '../db/postgres-store.js';
import type { StoreOptions } from '../db/store-options.js';
import { INITIAL_TODO, TODO_ID_MAX, type CreateOutcome, type FinishOutcome, type Todo, type TodoInput, type TodoStore } from './store.js';
import { decodeTitle, encodeTitle } from './title.js';

/** pg_advisory_xact_lock key that every batch of writes holds: any constant shared by all instances. */
const ID_LOCK = 7_310_002;
const KEYS_TABLE = 'todo_idempotency_keys';
const CLAIM_KEYS = 'todo_claim_keys';

/**
 * Applies a batch of writes in order. answers[i] says what write i did (created, no-id-left,
 * replaced, removed, missing, finished, already-done); new_ids[i] is a created item's id;
 * titles_out[i] a finished item's title.
 */
const WRITE_BATCH_FUNCTION = `CREATE OR REPLACE FUNCTION todo_write_batch(kinds TEXT[], ids BIGINT[], titles TEXT[], dones BOOLEAN[],
        OUT answers TEXT[], OUT new_ids BIGINT[], OUT titles_out TEXT[])
    LANGUAGE plpgsql AS $$
    DECLARE
      new_id BIGINT;
      finished_title TEXT;
    BEGIN
      PERFORM pg_advisory_xact_lock(${ID_LOCK});
      answers := '{}';
      new_ids := '{}';
      titles_out := '{}';
      FOR i IN 1 .. COALESCE(cardinality(kinds), 0) LOOP
        new_ids[i] := NULL;
        titles_out[i] := NULL;
        CASE kinds[i]
        WHEN 'create' THEN
          SELECT COALESCE(MAX(t.id), 0) + 1 INTO new_id FROM todos t;
          IF new_id > ${TODO_ID_MAX} THEN
            answers[i] := 'no-id-left';
          ELSE
            INSERT INTO todos (id, title, done) VALUES (new_id, titles[i], dones[i]);
            answers[i] := 'created';
            new_ids[i] := new_id;
          END IF;
        WHEN 'replace' THEN
          UPDATE todos SET title = titles[i], done = dones[i] WHERE todos.id = ids[i];
          IF FOUND THEN
            answers[i] := 'replaced';
          ELSE
            INSERT INTO todos (id, title, done) VALUES (ids[i], titles[i], dones[i]);
            answers[i] := 'created';
          END IF;
        WHEN 'remove' THEN
          DELETE FROM todos WHERE todos.id = ids[i];
          answers[i] := CASE WHEN FOUND THEN 'removed' ELSE 'missing' END;
        WHEN 'finish' THEN
          UPDATE todos SET done = true WHERE todos.id = ids[i] AND NOT todos.done RETURNING todos.title INTO finished_title;
          IF FOUND THEN
            answers[i] := 'finished';
            titles_out[i] := finished_title;
          ELSIF EXISTS (SELECT 1 FROM todos WHERE todos.id = ids[i]) THEN
            answers[i] := 'already-done';
          ELSE
            answers[i] := 'missing';
          END IF;
        END CASE;
      END LOOP;
    END
    $$`;

export const TODO_POSTGRES_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `CREATE TABLE todos (
      id BIGINT PRIMARY KEY,
      title TEXT NOT NULL,   -- a JSON string literal, see title.ts
      done BOOLEAN NOT NULL
    )`,
  },
  { version: 2, sql: WRITE_BATCH_FUNCTION },
  { version: 3, sql: recordsTableSql(KEYS_TABLE, 'BIGINT', '', 'answer') },
  { version: 4, sql: claimKeysFunctionSql(CLAIM_KEYS, KEYS_TABLE, 'answer') },
  // D11: databases made before it get the create that stops at TODO_ID_MAX.
  { version: 5, sql: WRITE_BATCH_FUNCTION },
  {
    // Every answer recorded before was a create's 201, whose body names the id taken.
    version: 6,
    sql: `${outcomeRecordsSql(KEYS_TABLE, 'postgres', "CASE WHEN status = 201 THEN json_build_object('kind', 'created', 'id', (body::json ->> 'id')::bigint)::text END")};
      ${claimKeysFunctionSql(CLAIM_KEYS, KEYS_TABLE)}`,
  },
];

/** Titles travel encoded (title.ts); an id is 0 where the write names none. */
type TodoWrite =
  | { readonly kind: 'create'; readonly title: string; readonly done: boolean }
  | { readonly kind: 'replace'; readonly id: number; readonly title: string; readonly done: boolean }
  | { readonly kind: 'remove'; readonly id: number }
  | { readonly kind: 'finish'; readonly id: number };

interface WriteAnswer {
  readonly answer: string;
  readonly newId: string | null;
  readonly title: string | null;
}

interface TitleRow {
  readonly title: string;
  readonly done: boolean;
}

const writeSize = (write: TodoWrite): number => ('title' in write ? write.title.length * 3 : 0) + 32;

export async function openPostgresTodoStore(url: string, options: StoreOptions = {}): Promise<TodoStore> {
  const store = await openPostgresStore<TodoWrite, WriteAnswer>({
    url,
    service: 'todo',
    migrations: TODO_POSTGRES_MIGRATIONS,
    seed: async (seeding) => {
      await seeding.query('INSERT INTO todos (id, title, done) VALUES ($1, $2, $3)', [
        String(INITIAL_TODO.id),
        encodeTitle(INITIAL_TODO.title),
        INITIAL_TODO.done,
      ]);
    },
    async decide(session, batch) {
      const { rows } = await session.query<{ answers: string[]; new_ids: (string | null)[]; titles_out: (string | null)[] }>(
        'SELECT answers, new_ids, titles_out FROM todo_write_batch($1::text[], $2::bigint[], $3::text[], $4::boolean[])',
        [
          batch.map((w) => w.kind),
          batch.map((w) => ('id' in w ? w.id : 0)),
          batch.map((w) => ('title' in w ? w.title : null)),
          batch.map((w) => ('done' in w ? w.done : null)),
        ],
        'todo_write_batch',
      );
      const row = rows[0];
      if (row === undefined || row.answers.length !== batch.length) throw new Error('todo_write_batch answered another number of writes');
      return row.answers.map((answer, i) => ({ answer, newId: row.new_ids[i] ?? null, title: row.titles_out[i] ?? null }));
    },
    sizeOf: writeSize,
    keysTable: KEYS_TABLE,
    claimFunction: CLAIM_KEYS,
    options,
  });

  const selectTodos = store.db.prepared<TitleRow & { id: string }>('todo_select', 'SELECT id::text AS id, title, done FROM todos WHERE id = ANY($1::bigint[])');
  const reads = store.reads<number, TitleRow>(
    async (ids) => {
      const { rows } = await selectTodos([ids]);
      return new Map(rows.map((row) => [Number(row.id), row]));
    },
    () => 8,
  );

  return {
    async get(id) {
      const row = await reads.read(id);
      return row === undefined ? undefined : toTodo(id, row);
    },
    async create(input) {
      return createOutcome(await store.write({ kind: 'create', title: encodeTitle(input.title), done: input.done }));
    },
    createOnce: (input, key) => store.writeOnce({ kind: 'create', title: encodeTitle(input.title), done: input.done }, key, createOutcome),
    pruneKeys: (expiredBeforeMs) => store.pruneKeys(expiredBeforeMs),
    async replace(id, input: TodoInput) {
      const { answer } = await store.write({ kind: 'replace', id, title: encodeTitle(input.title), done: input.done });
      return { todo: { id, title: input.title, done: input.done }, created: answer === 'created' };
    },
    async remove(id) {
      return (await store.write({ kind: 'remove', id })).answer === 'removed';
    },
    async finish(id): Promise<FinishOutcome> {
      const { answer, title } = await store.write({ kind: 'finish', id });
      if (answer === 'missing' || answer === 'already-done') return { kind: answer };
      if (answer !== 'finished' || title === null) throw new Error(`todo_write_batch answered a finish with ${answer}`);
      return { kind: 'finished', todo: toTodo(id, { title, done: true }) };
    },
    ping: () => store.ready(),
    close: () => store.close(),
  };
}

function createOutcome({ answer, newId }: WriteAnswer): CreateOutcome {
  if (answer === 'no-id-left') return { kind: 'no-id-left' };
  if (answer !== 'created' || newId === null) throw new Error(`todo_write_batch answered a create with ${answer}`);
  return { kind: 'created', id: Number(newId) };
}

function toTodo(id: number, row: TitleRow): Todo {
  return { id, title: decodeTitle(row.title), done: row.done };
}
