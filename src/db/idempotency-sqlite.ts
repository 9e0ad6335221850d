// Idempotency records on SQLite (idempotency-records.ts). Every statement here runs inside the
// write transaction of the keyed write, under SQLite's one write lock: the lookup and the record
// cannot be separated by another writer, in this process or another one on the same file.
import { PRUNE_BATCH_ROWS, recordedOutcome, type KeyedWrite, type RecordRow, type StoredAnswer, type StoredOutcome } from './idempotency-records.js';
import type { SqliteDatabase } from './sqlite.js';

export interface SqliteKeyRecords {
  /** The live record of the key, if there is one. */
  find(write: KeyedWrite): StoredOutcome | undefined;
  /** Records the answer of a write that just ran (replacing an expired record of the key). */
  record(write: KeyedWrite, answer: StoredAnswer): StoredOutcome;
  /** Deletes up to PRUNE_BATCH_ROWS expired records; returns how many. */
  prune(expiredBeforeMs: number): number;
}

export function prepareKeyRecords(db: SqliteDatabase, table: string): SqliteKeyRecords {
  const select = db.prepare<[string, number], RecordRow>(
    `SELECT fingerprint, status, content_type, headers, body, recorded_at_ms FROM ${table} WHERE key = ? AND recorded_at_ms >= ?`,
  );
  const insert = db.prepare<[string, string, number, string, string, string, number]>(
    `INSERT INTO ${table} (key, fingerprint, status, content_type, headers, body, recorded_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (key) DO UPDATE SET fingerprint = excluded.fingerprint, status = excluded.status, content_type = excluded.content_type,
       headers = excluded.headers, body = excluded.body, recorded_at_ms = excluded.recorded_at_ms`,
  );
  const prune = db.prepare<[number, number]>(
    `DELETE FROM ${table} WHERE key IN (SELECT key FROM ${table} WHERE recorded_at_ms < ? LIMIT ?)`,
  );
  return {
    find(write) {
      const row = select.get(write.key, write.expiredBeforeMs);
      return row === undefined ? undefined : recordedOutcome(row);
    },
    record(write, answer) {
      insert.run(write.key, write.fingerprint, answer.status, answer.contentType, JSON.stringify(answer.headers), answer.body, write.nowMs);
      return { kind: 'ran', answer, recordedAtMs: write.nowMs };
    },
    prune(expiredBeforeMs) {
      return prune.run(expiredBeforeMs, PRUNE_BATCH_ROWS).changes;
    },
  };
}
