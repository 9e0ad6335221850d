// How a to-do database on PostgreSQL came to be what it is: every migration, in order, each as
// it was first run. A database runs the ones it has not yet run, so each text stays as it was;
// where a function was installed as it no longer is, that text is kept here, frozen (numbers
// written out), and the function's one current definition is in store-postgres-schema.ts, which
// the newest migration that changed it installs.
import { outcomeRecordsSql, recordsTableSql } from '../db/idempotency-records.js';
import { claimKeysFunctionSql, plannedAtEachCallSql } from '../db/postgres/idempotency.js';
import type { Migration } from '../db/migrations.js';
import {
  CLAIM_KEYS,
  CLAIM_KEYS_FUNCTION,
  JUDGE_FUNCTION,
  KEYS_TABLE,
  WRITE_BATCH_FUNCTION,
} from './store-postgres-schema.js';

/**
 * todo_write_batch before versions, as migrations 2 and 5 installed it. answers[i] says what write
 * i did (created, no-id-left, replaced, removed, missing, finished, already-done); new_ids[i] is a
 * created item's id; titles_out[i] a finished item's title.
 */
const WRITE_BATCH_BEFORE_VERSIONS = `CREATE OR REPLACE FUNCTION todo_write_batch(kinds TEXT[], ids BIGINT[], titles TEXT[], dones BOOLEAN[],
        OUT answers TEXT[], OUT new_ids BIGINT[], OUT titles_out TEXT[])
    LANGUAGE plpgsql AS $$
    DECLARE
      new_id BIGINT;
      finished_title TEXT;
    BEGIN
      PERFORM pg_advisory_xact_lock(7310002);
      answers := '{}';
      new_ids := '{}';
      titles_out := '{}';
      FOR i IN 1 .. COALESCE(cardinality(kinds), 0) LOOP
        new_ids[i] := NULL;
        titles_out[i] := NULL;
        CASE kinds[i]
        WHEN 'create' THEN
          SELECT COALESCE(MAX(t.id), 0) + 1 INTO new_id FROM todos t;
          IF new_id > 9007199254740991 THEN
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

/** todo_write_batch with versions, as migration 7 installed it: a replace's version read and judged, then the write. */
const WRITE_BATCH_JUDGED_FIRST = `CREATE OR REPLACE FUNCTION todo_write_batch(kinds TEXT[], ids BIGINT[], titles TEXT[], dones BOOLEAN[],
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
      PERFORM pg_advisory_xact_lock(7310002);
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
          IF new_id > 9007199254740991 THEN
            answers[i] := 'no-id-left';
          ELSE
            INSERT INTO todos (id, title, done, version) VALUES (new_id, titles[i], dones[i], nextval('todo_versions'))
              RETURNING todos.version INTO new_version;
            answers[i] := 'created';
            new_ids[i] := new_id;
            versions[i] := new_version;
          END IF;
        WHEN 'replace' THEN
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
        WHEN 'remove' THEN
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
    // Every response recorded before was a create's 201, whose body names the id taken.
    version: 6,
    sql: `${outcomeRecordsSql(KEYS_TABLE, 'postgres', "CASE WHEN status = 201 THEN json_build_object('kind', 'created', 'id', (body::json ->> 'id')::bigint)::text END")};
      ${CLAIM_KEYS_FUNCTION}`,
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
      ${WRITE_BATCH_JUDGED_FIRST}`,
  },
  // A conditional PUT judged by its UPDATE: no read of the version before the write that succeeds.
  { version: 8, sql: WRITE_BATCH_FUNCTION },
  // The claim planned at each call, for the table as it is (plannedAtEachCallSql).
  { version: 9, sql: plannedAtEachCallSql(CLAIM_KEYS) },
];
