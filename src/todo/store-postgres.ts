// The to-do store on PostgreSQL, safe with several instances on one database, on the scaffold of
// src/db/postgres-store.ts. Writes are group-committed: a batch of them is one call of
// todo_write_batch, which takes a transaction-scoped advisory lock and applies them in the order
// asked. Every batch of every instance holds that lock, so ids are handed out one batch at a time
// (under READ COMMITTED each statement sees what committed before it, so MAX(id) + 1 read after
// the lock is current), and no two batches ever lock rows in opposite orders. Reads that arrive
// together share one query. Keyed writes (a create, replace, remove or finish under an
// Idempotency-Key) share the batch: a batch that holds any is one transaction that claims their
// keys, applies every write that may run with the same function, and records the keyed ones'
// outcomes before its one commit. A conditional write judges its condition (todo_judge, the SQL
// of write-conditions.ts) inside that same function, under that lock, a replace in the WHERE of
// its UPDATE: no write of any instance comes between the check and the change.
import { outcomeRecordsSql, recordsTableSql } from '../db/idempotency-records.js';
import { claimKeysFunctionSql } from '../db/idempotency-postgres.js';
import type { Migration } from '../db/migrations.js';
import { openPostgresStore } from '../db/postgres-store.js';
import type { StoreOptions } from '../db/store-options.js';
import {
  INITIAL_TODO,
  TODO_ID_MAX,
  type CreateOutcome,
  type FinishOutcome,
  type RemoveOutcome,
  type ReplaceOutcome,
  type StoredTodo,
  type TodoInput,
  type TodoStore,
} from './store.js';
import { decodeTitle, encodeTitle } from './title.js';
import { UNCONDITIONAL, type VersionSet, type WriteCondition } from './write-conditions.js';

/** pg_advisory_xact_lock key that every batch of writes holds: any constant shared by all instances. */
const ID_LOCK = 7_310_002;
const KEYS_TABLE = 'todo_idempotency_keys';
const CLAIM_KEYS = 'todo_claim_keys';

/**
 * The batch function before versions, as migrations 2 and 5 made it (kept as it was: a migration
 * never changes). Applies a batch of writes in order. answers[i] says what write i did (created,
 * no-id-left, replaced, removed, missing, finished, already-done); new_ids[i] is a created item's
 * id; titles_out[i] a finished item's title.
 */
const WRITE_BATCH_BEFORE_VERSIONS = `CREATE OR REPLACE FUNCTION todo_write_batch(kinds TEXT[], ids BIGINT[], titles TEXT[], dones BOOLEAN[],
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

/**
 * What write-conditions.ts's judge() says, in SQL: a condition travels as its If-Match and
 * If-None-Match versions (NULL: none; '*': any; else the versions joined by commas, '' for none
 * that could match) and whether a version is required.
 */
const JUDGE_FUNCTION = `CREATE OR REPLACE FUNCTION todo_judge(current_version BIGINT, if_match TEXT, if_none_match TEXT, required BOOLEAN)
    RETURNS TEXT LANGUAGE sql IMMUTABLE AS $$
      SELECT CASE
        WHEN required AND current_version IS NOT NULL THEN 'version-required'
        WHEN if_match IS NOT NULL AND (current_version IS NULL
          OR (if_match <> '*' AND NOT current_version::text = ANY (string_to_array(if_match, ',')))) THEN 'stale'
        WHEN if_none_match IS NOT NULL AND current_version IS NOT NULL
          AND (if_none_match = '*' OR current_version::text = ANY (string_to_array(if_none_match, ','))) THEN 'stale'
        ELSE 'go'
      END
    $$`;

/** A batch's replace as migration 7 made it: the version read and judged, then the write. */
const REPLACE_JUDGED_FIRST = `        WHEN 'replace' THEN
          IF conditional THEN
            SELECT t.version INTO current_version FROM todos t WHERE t.id = ids[i];
            verdict := todo_judge(current_version, if_matches[i], if_none_matches[i], COALESCE(requireds[i], false));
          END IF;
          IF verdict <> 'go' THEN
            answers[i] := verdict;
          ELSE
            new_version := nextval('todo_versions');
            UPDATE todos SET title = titles[i], done = dones[i], version = new_version WHERE todos.id = ids[i];
            IF FOUND THEN
              answers[i] := 'replaced';
            ELSE
              INSERT INTO todos (id, title, done, version) VALUES (ids[i], titles[i], dones[i], new_version);
              answers[i] := 'created';
            END IF;
            versions[i] := new_version;
          END IF;
`;

/**
 * A batch's replace since migration 8: the condition is part of the UPDATE, which changes the row
 * only where it holds. Only when the UPDATE changed nothing is the version read, to tell a refusal
 * from an absent item (which the condition may let the write create).
 */
const REPLACE_JUDGED_BY_UPDATE = `        WHEN 'replace' THEN
          UPDATE todos SET title = titles[i], done = dones[i], version = nextval('todo_versions')
            WHERE todos.id = ids[i]
              AND (NOT conditional OR todo_judge(todos.version, if_matches[i], if_none_matches[i], COALESCE(requireds[i], false)) = 'go')
            RETURNING todos.version INTO new_version;
          IF FOUND THEN
            answers[i] := 'replaced';
            versions[i] := new_version;
          ELSE
            IF conditional THEN
              -- No row: current_version is NULL, an absent item.
              SELECT t.version INTO current_version FROM todos t WHERE t.id = ids[i];
              verdict := todo_judge(current_version, if_matches[i], if_none_matches[i], COALESCE(requireds[i], false));
            END IF;
            IF verdict <> 'go' THEN
              answers[i] := verdict;
            ELSE
              INSERT INTO todos (id, title, done, version) VALUES (ids[i], titles[i], dones[i], nextval('todo_versions'))
                RETURNING todos.version INTO new_version;
              answers[i] := 'created';
              versions[i] := new_version;
            END IF;
          END IF;
`;

/**
 * Applies a batch of writes in order. answers[i] says what write i did (created, no-id-left,
 * replaced, removed, missing, finished, already-done, stale, version-required); new_ids[i] is a
 * created item's id; titles_out[i] a finished item's title; versions[i] the version a write gave
 * its item, taken from the sequence todo_versions, which never hands out a value twice.
 * A missing item is missing, and a done one already done, before any condition is judged.
 * `replace` is the replace's branch (REPLACE_JUDGED_FIRST, REPLACE_JUDGED_BY_UPDATE).
 */
const writeBatchFunctionSql = (replace: string): string => `CREATE OR REPLACE FUNCTION todo_write_batch(kinds TEXT[], ids BIGINT[], titles TEXT[], dones BOOLEAN[],
        if_matches TEXT[], if_none_matches TEXT[], requireds BOOLEAN[],
        OUT answers TEXT[], OUT new_ids BIGINT[], OUT titles_out TEXT[], OUT versions BIGINT[])
    LANGUAGE plpgsql AS $$
    DECLARE
      new_id BIGINT;
      new_version BIGINT;
      current_version BIGINT;
      current_done BOOLEAN;
      conditional BOOLEAN;
      verdict TEXT;
      finished_title TEXT;
    BEGIN
      PERFORM pg_advisory_xact_lock(${ID_LOCK});
      answers := '{}';
      new_ids := '{}';
      titles_out := '{}';
      versions := '{}';
      FOR i IN 1 .. COALESCE(cardinality(kinds), 0) LOOP
        new_ids[i] := NULL;
        titles_out[i] := NULL;
        versions[i] := NULL;
        conditional := if_matches[i] IS NOT NULL OR if_none_matches[i] IS NOT NULL OR COALESCE(requireds[i], false);
        verdict := 'go';
        CASE kinds[i]
        WHEN 'create' THEN
          SELECT COALESCE(MAX(t.id), 0) + 1 INTO new_id FROM todos t;
          IF new_id > ${TODO_ID_MAX} THEN
            answers[i] := 'no-id-left';
          ELSE
            INSERT INTO todos (id, title, done, version) VALUES (new_id, titles[i], dones[i], nextval('todo_versions'))
              RETURNING todos.version INTO new_version;
            answers[i] := 'created';
            new_ids[i] := new_id;
            versions[i] := new_version;
          END IF;
${replace}        WHEN 'remove' THEN
          IF conditional THEN
            SELECT t.version INTO current_version FROM todos t WHERE t.id = ids[i];
            verdict := CASE WHEN NOT FOUND THEN 'missing'
              ELSE todo_judge(current_version, if_matches[i], if_none_matches[i], COALESCE(requireds[i], false)) END;
          END IF;
          IF verdict <> 'go' THEN
            answers[i] := verdict;
          ELSE
            DELETE FROM todos WHERE todos.id = ids[i];
            answers[i] := CASE WHEN FOUND THEN 'removed' ELSE 'missing' END;
          END IF;
        WHEN 'finish' THEN
          IF conditional THEN
            SELECT t.version, t.done INTO current_version, current_done FROM todos t WHERE t.id = ids[i];
            verdict := CASE WHEN NOT FOUND THEN 'missing' WHEN current_done THEN 'already-done'
              ELSE todo_judge(current_version, if_matches[i], if_none_matches[i], COALESCE(requireds[i], false)) END;
          END IF;
          IF verdict <> 'go' THEN
            answers[i] := verdict;
          ELSE
            UPDATE todos SET done = true, version = nextval('todo_versions') WHERE todos.id = ids[i] AND NOT todos.done
              RETURNING todos.title, todos.version INTO finished_title, new_version;
            IF FOUND THEN
              answers[i] := 'finished';
              titles_out[i] := finished_title;
              versions[i] := new_version;
            ELSIF EXISTS (SELECT 1 FROM todos WHERE todos.id = ids[i]) THEN
              answers[i] := 'already-done';
            ELSE
              answers[i] := 'missing';
            END IF;
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
  { version: 2, sql: WRITE_BATCH_BEFORE_VERSIONS },
  { version: 3, sql: recordsTableSql(KEYS_TABLE, 'BIGINT', '', 'answer') },
  { version: 4, sql: claimKeysFunctionSql(CLAIM_KEYS, KEYS_TABLE, 'answer') },
  // D11: databases made before it get the create that stops at TODO_ID_MAX.
  { version: 5, sql: WRITE_BATCH_BEFORE_VERSIONS },
  {
    // Every answer recorded before was a create's 201, whose body names the id taken.
    version: 6,
    sql: `${outcomeRecordsSql(KEYS_TABLE, 'postgres', "CASE WHEN status = 201 THEN json_build_object('kind', 'created', 'id', (body::json ->> 'id')::bigint)::text END")};
      ${claimKeysFunctionSql(CLAIM_KEYS, KEYS_TABLE)}`,
  },
  {
    // Versions (conditional requests): one sequence for the database, so that an id used again
    // after a delete never shows a version it had before. Items already there each take the next
    // value (a volatile default is evaluated row by row).
    version: 7,
    sql: `CREATE SEQUENCE todo_versions;
      ALTER TABLE todos ADD COLUMN version BIGINT NOT NULL DEFAULT nextval('todo_versions');
      DROP FUNCTION todo_write_batch(TEXT[], BIGINT[], TEXT[], BOOLEAN[]);
      ${JUDGE_FUNCTION};
      ${writeBatchFunctionSql(REPLACE_JUDGED_FIRST)}`,
  },
  // A conditional PUT judged by its UPDATE: no read of the version before the write that succeeds.
  { version: 8, sql: writeBatchFunctionSql(REPLACE_JUDGED_BY_UPDATE) },
  // The claim planned at each call, for the table as it is (claimKeysFunctionSql).
  { version: 9, sql: claimKeysFunctionSql(CLAIM_KEYS, KEYS_TABLE) },
];

/** Titles travel encoded (title.ts); an id is 0 where the write names none. */
type TodoWrite =
  | { readonly kind: 'create'; readonly title: string; readonly done: boolean }
  | { readonly kind: 'replace'; readonly id: number; readonly title: string; readonly done: boolean; readonly condition: WriteCondition }
  | { readonly kind: 'remove'; readonly id: number; readonly condition: WriteCondition }
  | { readonly kind: 'finish'; readonly id: number; readonly condition: WriteCondition };

interface WriteAnswer {
  readonly answer: string;
  readonly newId: string | null;
  readonly title: string | null;
  readonly version: string | null;
}

interface TitleRow {
  readonly title: string;
  readonly done: boolean;
  readonly version: string;
}

/** A version set as todo_judge reads it: '*', or the versions joined by commas. */
const versionsText = (versions: VersionSet | undefined): string | null =>
  versions === undefined ? null : versions === 'any' ? '*' : versions.join(',');

const conditionOf = (write: TodoWrite): WriteCondition => ('condition' in write ? write.condition : UNCONDITIONAL);

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
      const conditions = batch.map(conditionOf);
      const { rows } = await session.query<{ answers: string[]; new_ids: (string | null)[]; titles_out: (string | null)[]; versions: (string | null)[] }>(
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
      if (row === undefined || row.answers.length !== batch.length) throw new Error('todo_write_batch answered another number of writes');
      return row.answers.map((answer, i) => ({ answer, newId: row.new_ids[i] ?? null, title: row.titles_out[i] ?? null, version: row.versions[i] ?? null }));
    },
    sizeOf: writeSize,
    keysTable: KEYS_TABLE,
    claimFunction: CLAIM_KEYS,
    options,
  });

  const selectTodos = store.db.prepared<TitleRow & { id: string }>(
    'todo_select_versioned',
    'SELECT id::text AS id, title, done, version::text AS version FROM todos WHERE id = ANY($1::bigint[])',
  );
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
    async replace(id, input: TodoInput, condition = UNCONDITIONAL) {
      return replaceOutcome(id, input, await store.write(replaceOp(id, input, condition)));
    },
    async remove(id, condition = UNCONDITIONAL) {
      return removeOutcome(await store.write({ kind: 'remove', id, condition }));
    },
    async finish(id, condition = UNCONDITIONAL) {
      return finishOutcome(id, await store.write({ kind: 'finish', id, condition }));
    },
    // Keyed: the outcome recorded is the one answered, read from the batch's answer as above.
    replaceOnce: (id, input, condition, key) => store.writeOnce(replaceOp(id, input, condition), key, (answer) => replaceOutcome(id, input, answer)),
    removeOnce: (id, condition, key) => store.writeOnce({ kind: 'remove', id, condition }, key, removeOutcome),
    finishOnce: (id, condition, key) => store.writeOnce({ kind: 'finish', id, condition }, key, (answer) => finishOutcome(id, answer)),
    ping: () => store.ready(),
    close: () => store.close(),
  };
}

const replaceOp = (id: number, input: TodoInput, condition: WriteCondition): TodoWrite => ({
  kind: 'replace',
  id,
  title: encodeTitle(input.title),
  done: input.done,
  condition,
});

function replaceOutcome(id: number, input: TodoInput, { answer, version }: WriteAnswer): ReplaceOutcome {
  if (answer === 'stale' || answer === 'version-required') return { kind: answer };
  if ((answer !== 'replaced' && answer !== 'created') || version === null) throw new Error(`todo_write_batch answered a replace with ${answer}`);
  return { kind: answer, todo: { id, title: input.title, done: input.done, version: Number(version) } };
}

function removeOutcome({ answer }: WriteAnswer): RemoveOutcome {
  if (answer === 'removed' || answer === 'missing' || answer === 'stale' || answer === 'version-required') return { kind: answer };
  throw new Error(`todo_write_batch answered a remove with ${answer}`);
}

function finishOutcome(id: number, { answer, title, version }: WriteAnswer): FinishOutcome {
  if (answer === 'missing' || answer === 'already-done' || answer === 'stale' || answer === 'version-required') return { kind: answer };
  if (answer !== 'finished' || title === null || version === null) throw new Error(`todo_write_batch answered a finish with ${answer}`);
  return { kind: 'finished', todo: toTodo(id, { title, done: true, version }) };
}

function createOutcome({ answer, newId, version }: WriteAnswer): CreateOutcome {
  if (answer === 'no-id-left') return { kind: 'no-id-left' };
  if (answer !== 'created' || newId === null || version === null) throw new Error(`todo_write_batch answered a create with ${answer}`);
  return { kind: 'created', id: Number(newId), version: Number(version) };
}

function toTodo(id: number, row: TitleRow): StoredTodo {
  return { id, title: decodeTitle(row.title), done: row.done, version: Number(row.version) };
}
