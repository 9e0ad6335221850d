// The to-do store on PostgreSQL, safe with several instances on one database, on the scaffold of
// src/db/postgres/store.ts. Writes are group-committed: a batch of them is one call of
// todo_write_batch, which takes a transaction-scoped advisory lock and applies them in the order
// asked. Every batch of every instance holds that lock, so ids are handed out one batch at a time
// (under READ COMMITTED each statement sees what committed before it, so MAX(id) + 1 read after
// the lock is current), and no two batches ever lock rows in opposite orders. Reads that arrive
// together share one query. Keyed writes (a create, replace, remove or finish under an
// Idempotency-Key) share the batch: a batch that holds any is one transaction that claims their
// keys, applies every write that may run with the same function, and records the keyed ones'
// outcomes before its one commit. A conditional write judges its condition (todo_judge, the SQL
// of write-conditions.ts) inside that same function, under that lock, a replace in the WHERE of
// its UPDATE: no write of any instance comes between the check and the change. The functions are
// in store-postgres-schema.ts, as they are now; the migrations that led there in
// store-postgres-migrations.ts. The writes, what the function answers of each and how that reads
// as an outcome are those of writes.ts, the same as on SQLite.
import { openPostgresStore } from '../db/postgres/store.js';
import type { StoreOptions } from '../db/store-options.js';
import { INITIAL_TODO, type StoredTodo, type TodoStore } from './store.js';
import { TODO_POSTGRES_MIGRATIONS } from './store-postgres-migrations.js';
import { CLAIM_KEYS, KEYS_TABLE } from './store-postgres-schema.js';
import { decodeTitle, encodeTitle } from './title.js';
import { UNCONDITIONAL, type VersionSet, type WriteCondition } from './write-conditions.js';
import {
  todoOutcome,
  todoWrites,
  todoWriteSize,
  type TodoOutcome,
  type TodoWrite,
  type TodoWriteResult,
} from './writes.js';

interface TitleRow {
  readonly title: string;
  readonly done: boolean;
  readonly version: string;
}

/** A version set as todo_judge reads it: '*', or the versions joined by commas. */
const versionsText = (versions: VersionSet | undefined): string | null =>
  versions === undefined ? null : versions === 'any' ? '*' : versions.join(',');

const conditionOf = (write: TodoWrite): WriteCondition =>
  'condition' in write ? write.condition : UNCONDITIONAL;

export async function openPostgresTodoStore(
  url: string,
  options: StoreOptions = {},
): Promise<TodoStore> {
  const store = await openPostgresStore<TodoWrite, TodoWriteResult, TodoOutcome>({
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
      const conditions = batch.map(conditionOf);
      const { rows } = await session.query<{
        answers: string[];
        new_ids: (string | null)[];
        titles_out: (string | null)[];
        versions: (string | null)[];
      }>(
        `SELECT answers, new_ids, titles_out, versions
           FROM todo_write_batch($1::text[], $2::bigint[], $3::text[], $4::boolean[], $5::text[], $6::text[], $7::boolean[])`,
        [
          batch.map((w) => w.kind),
          batch.map((w) => ('id' in w ? w.id : 0)),
          batch.map((w) => ('title' in w ? w.title : null)),
          batch.map((w) => ('done' in w ? w.done : null)),
          conditions.map((c) => (c.kind === 'versions' ? versionsText(c.ifMatch) : null)),
          conditions.map((c) => (c.kind === 'versions' ? versionsText(c.ifNoneMatch) : null)),
          conditions.map((c) => c.kind === 'required'),
        ],
        'todo_write_batch_versioned',
      );
      const row = rows[0];
      if (row === undefined || row.answers.length !== batch.length)
        throw new Error('todo_write_batch answered another number of writes');
      return row.answers.map((outcome, i): TodoWriteResult => ({
        outcome,
        id: row.new_ids[i],
        title: row.titles_out[i],
        version: row.versions[i],
      }));
    },
    outcome: todoOutcome,
    sizeOf: todoWriteSize,
    keysTable: KEYS_TABLE,
    claimFunction: CLAIM_KEYS,
    writeTable: 'todos',
    options,
  });

  const reads = store.reads<number, TitleRow & { id: string }, TitleRow>({
    name: 'todo_select_versioned',
    table: 'todos',
    sql: 'SELECT id::text AS id, title, done, version::text AS version FROM todos WHERE id = ANY($1::bigint[])',
    columns: ['id', 'title', 'done', 'version'],
    keyOf: (row) => Number(row.id),
    valueOf: (row) => row,
    sizeOf: () => 8,
  });

  return {
    async get(id, work) {
      const row = await reads.read(id, work);
      return row === undefined ? undefined : toTodo(id, row);
    },
    ...todoWrites((op, key, work) => store.write(op, key, work)),
    pruneKeys: (expiredBeforeMs) => store.pruneKeys(expiredBeforeMs),
    ping: () => store.ready(),
    close: () => store.close(),
  };
}

function toTodo(id: number, row: TitleRow): StoredTodo {
  return { id, title: decodeTitle(row.title), done: row.done, version: Number(row.version) };
}
