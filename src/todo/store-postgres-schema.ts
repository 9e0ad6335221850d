// The to-do store's PostgreSQL functions as they are now: the one definition of each, which the
// newest migration that changed it installs (store-postgres-migrations.ts, CREATE OR REPLACE). A
// database at any version ends with these, whatever steps it took to get here.
//
// Changing one: a migration never changes (a database that ran it does not run it again, and one
// that has not must pass through the same steps), so first copy the text it has now into
// store-postgres-migrations.ts for the migrations that install it, then change it here and add a
// migration that installs it. test/store/postgres-migration-history.test.ts holds every
// migration's digest, and fails when a text changes.
import { claimKeysFunctionSql } from '../db/postgres/idempotency.js';
import { TODO_ID_MAX } from './store.js';

/** pg_advisory_xact_lock key that every batch of writes holds: any constant shared by all instances. */
export const ID_LOCK = 7_310_002;
export const KEYS_TABLE = 'todo_idempotency_keys';
export const CLAIM_KEYS = 'todo_claim_keys';

/**
 * What write-conditions.ts's judge() says, in SQL: a condition travels as its If-Match and
 * If-None-Match versions (NULL: none; '*': any; else the versions joined by commas, '' for none
 * that could match) and whether a version is required.
 */
export const JUDGE_FUNCTION = `CREATE OR REPLACE FUNCTION todo_judge(current_version BIGINT, if_match TEXT, if_none_match TEXT, required BOOLEAN)
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

/**
 * Applies a batch of writes in order. answers[i] says what write i did (created, no-id-left,
 * replaced, removed, missing, finished, already-done, stale, version-required); new_ids[i] is a
 * created item's id; titles_out[i] a finished item's title; versions[i] the version a write gave
 * its item, taken from the sequence todo_versions, which never hands out a value twice.
 * A missing item is missing, and a done one already done, before any condition is judged.
 * A replace's condition is part of its UPDATE, which changes the row only where it holds; only when
 * the UPDATE changed nothing is the version read, to tell a refusal from an absent item (which the
 * condition may let the write create).
 */
export const WRITE_BATCH_FUNCTION = `CREATE OR REPLACE FUNCTION todo_write_batch(kinds TEXT[], ids BIGINT[], titles TEXT[], dones BOOLEAN[],
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
        WHEN 'replace' THEN
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

/** The claim of a batch's keys (idempotency-postgres.ts), over the table of outcomes. */
export const CLAIM_KEYS_FUNCTION = claimKeysFunctionSql(CLAIM_KEYS, KEYS_TABLE);
