// Idempotency records as both databases keep them: one row per key, holding the request it was used
// for (its fingerprint) and the outcome of its write as JSON (src/common/keyed-writes.ts), written
// in the same transaction as the write itself, so that no crash can separate the two. The primary
// key on `key` is what decides between instances: a key is recorded once. A row older than the time
// to live counts as absent, and is pruned in the background.
import type { KeyedOutcome, KeyedWrite } from '../common/keyed-writes.js';

/** Pruning deletes at most this many rows per statement, so that it never holds a lock for long. */
export const PRUNE_BATCH_ROWS = 1_000;

/** What a key adds to its write's share of a group-commit batch's byte bound: the key, the fingerprint, 16 bytes for the times. */
export const keyedWriteSize = (key: KeyedWrite): number =>
  key.key.length + key.fingerprint.length + 16;

export interface RecordRow {
  readonly fingerprint: string;
  /** The outcome as JSON text. */
  readonly outcome: string;
  readonly recorded_at_ms: number | string;
}

export function recordedOutcome<O>(row: RecordRow): KeyedOutcome<O> {
  return {
    kind: 'recorded',
    fingerprint: row.fingerprint,
    outcome: JSON.parse(row.outcome) as O,
    recordedAtMs: Number(row.recorded_at_ms),
  };
}

/**
 * What a record holds: its `outcome` (JSON), or, in the first design, the rendered HTTP `answer` (a
 * response) (status, content type, headers, body). The early migrations still make the first
 * design, so that a new database passes through the same steps as one made before the change; a
 * later step of each store converts it (outcomeRecordsSql).
 */
export type RecordShape = 'outcome' | 'answer';

/** The columns each shape holds beside key, fingerprint and time. */
export const RECORD_COLUMNS: Readonly<
  Record<RecordShape, readonly (readonly [name: string, type: string])[]>
> = {
  outcome: [['outcome', 'TEXT']],
  answer: [
    ['status', 'INTEGER'],
    ['content_type', 'TEXT'],
    ['headers', 'TEXT'],
    ['body', 'TEXT'],
  ],
};

/** The table, for either database: `integer` is INTEGER on SQLite and BIGINT on PostgreSQL. */
export function recordsTableSql(
  table: string,
  integer: 'INTEGER' | 'BIGINT',
  strict: string,
  shape: RecordShape = 'outcome',
): string {
  return `CREATE TABLE ${table} (
      key TEXT PRIMARY KEY,
      fingerprint TEXT NOT NULL,
      ${RECORD_COLUMNS[shape].map(([name, type]) => `${name} ${type} NOT NULL,`).join('\n      ')}
      recorded_at_ms ${integer} NOT NULL
    )${strict};
    CREATE INDEX ${table}_recorded_at ON ${table} (recorded_at_ms)`;
}

/**
 * Turns the first design's table of rendered responses into the table of outcomes, in place.
 * `outcome` is the SQL expression of a row's outcome as JSON text, read from its `status` and
 * `body`; a row it gives NULL for is dropped, so its key runs again on a retry.
 */
export function outcomeRecordsSql(
  table: string,
  dialect: 'sqlite' | 'postgres',
  outcome: string,
): string {
  if (dialect === 'sqlite') {
    // SQLite cannot drop NOT NULL columns in place: the table is made anew.
    return `${recordsTableSql(`${table}_outcomes`, 'INTEGER', ' STRICT')};
      INSERT INTO ${table}_outcomes (key, fingerprint, outcome, recorded_at_ms)
        SELECT key, fingerprint, outcome, recorded_at_ms
        FROM (SELECT key, fingerprint, (${outcome}) AS outcome, recorded_at_ms FROM ${table})
        WHERE outcome IS NOT NULL;
      DROP TABLE ${table};
      ALTER TABLE ${table}_outcomes RENAME TO ${table}`;
  }
  return `ALTER TABLE ${table} ADD COLUMN outcome TEXT;
    UPDATE ${table} SET outcome = (${outcome});
    DELETE FROM ${table} WHERE outcome IS NULL;
    ALTER TABLE ${table} ALTER COLUMN outcome SET NOT NULL,
      DROP COLUMN status, DROP COLUMN content_type, DROP COLUMN headers, DROP COLUMN body`;
}
