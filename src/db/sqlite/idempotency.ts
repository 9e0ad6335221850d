// Idempotency records on SQLite (idempotency-records.ts). Every statement here runs inside the
// write transaction of the keyed write, under SQLite's one write lock: the lookup and the record
// cannot be separated by another writer, in this process or another one on the same file.
import type { KeyedOutcome, KeyedWrite } from '../../common/keyed-writes.js';
import { PRUNE_BATCH_ROWS, recordedOutcome, type RecordRow } from '../idempotency-records.js';
import type { SqliteDatabase } from './sqlite.js';

export interface SqliteKeyRecords {
  /** The live record of the key, if there is one. */
  find<O>(write: KeyedWrite): KeyedOutcome<O> | undefined;
  /** Records the outcome of a write that just ran (replacing an expired record of the key). */
  record<O>(write: KeyedWrite, outcome: O): KeyedOutcome<O>;
  /** Deletes up to PRUNE_BATCH_ROWS expired records; returns how many. */
  prune(expiredBeforeMs: number): number;
}

export function prepareKeyRecords(db: SqliteDatabase, table: string): SqliteKeyRecords {
  const select = db.prepare<[string, number], RecordRow>(
    `SELECT fingerprint, outcome, recorded_at_ms FROM ${table} WHERE key = ? AND recorded_at_ms >= ?`,
  );
  const insert = db.prepare<[string, string, string, number]>(
    `INSERT INTO ${table} (key, fingerprint, outcome, recorded_at_ms) VALUES (?, ?, ?, ?)
     ON CONFLICT (key) DO UPDATE SET fingerprint = excluded.fingerprint, outcome = excluded.outcome, recorded_at_ms = excluded.recorded_at_ms`,
  );
  const prune = db.prepare<[number, number]>(
    `DELETE FROM ${table} WHERE key IN (SELECT key FROM ${table} WHERE recorded_at_ms < ? LIMIT ?)`,
  );
  return {
    find<O>(write: KeyedWrite) {
      const row = select.get(write.key, write.expiredBeforeMs);
      return row === undefined ? undefined : recordedOutcome<O>(row);
    },
    record<O>(write: KeyedWrite, outcome: O): KeyedOutcome<O> {
      insert.run(write.key, write.fingerprint, JSON.stringify(outcome), write.nowMs);
      return { kind: 'ran', outcome };
    },
    prune(expiredBeforeMs) {
      return prune.run(expiredBeforeMs, PRUNE_BATCH_ROWS).changes;
    },
  };
}
