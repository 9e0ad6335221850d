// Idempotency records on PostgreSQL (idempotency-records.ts), inside the keyed write's transaction.
//
// A request running with a key holds a transaction-scoped advisory lock on it. It is tied to the
// transaction, so to the connection: when the instance holding it dies, the server drops the
// connection and the lock with it, and a retry runs (or replays what committed). Another instance
// that tries the lock meanwhile answers 409 at once instead of queueing. After the lock, a new
// statement (so a fresh snapshot under READ COMMITTED) reads the key: whatever committed with
// it before the lock was free is seen. The primary key on `key` stays the last word: a second
// record of a live key fails the transaction rather than overwriting the first.
import { PRUNE_BATCH_ROWS, recordedOutcome, type KeyedWrite, type RecordRow, type StoredAnswer, type StoredOutcome } from './idempotency-records.js';
import type { SqlSession } from './postgres.js';

/** pg_try_advisory_xact_lock(class, hashtext(key)): a class of its own, apart from other locks. */
const KEY_LOCK_CLASS = 7_310_003;

export interface PostgresKeyRecords {
  /** Takes the key for this transaction: its live record, 'in-flight', or undefined to go on and run. */
  claim(session: SqlSession, write: KeyedWrite): Promise<StoredOutcome | undefined>;
  /** Records the answer of a write that just ran, in the same transaction. */
  record(session: SqlSession, write: KeyedWrite, answer: StoredAnswer): Promise<StoredOutcome>;
  /** Deletes up to PRUNE_BATCH_ROWS expired records; returns how many. */
  prune(session: SqlSession, expiredBeforeMs: number): Promise<number>;
}

export function postgresKeyRecords(table: string): PostgresKeyRecords {
  return {
    async claim(session, write) {
      const { rows: locked } = await session.query<{ free: boolean }>('SELECT pg_try_advisory_xact_lock($1, hashtext($2)) AS free', [
        KEY_LOCK_CLASS,
        write.key,
      ]);
      if (locked[0]?.free !== true) return { kind: 'in-flight' };
      const { rows } = await session.query<RecordRow>(
        `SELECT fingerprint, status, content_type, headers, body, recorded_at_ms::text AS recorded_at_ms FROM ${table}
         WHERE key = $1 AND recorded_at_ms >= $2`,
        [write.key, write.expiredBeforeMs],
      );
      const row = rows[0];
      return row === undefined ? undefined : recordedOutcome(row);
    },
    async record(session, write, answer) {
      // Only an expired record may be replaced: with a live one (which the claim would have
      // found) the update matches nothing, no row comes back, and the transaction is failed.
      const { rowCount } = await session.query(
        `INSERT INTO ${table} (key, fingerprint, status, content_type, headers, body, recorded_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, status = EXCLUDED.status, content_type = EXCLUDED.content_type,
           headers = EXCLUDED.headers, body = EXCLUDED.body, recorded_at_ms = EXCLUDED.recorded_at_ms
         WHERE ${table}.recorded_at_ms < $8`,
        [write.key, write.fingerprint, answer.status, answer.contentType, JSON.stringify(answer.headers), answer.body, write.nowMs, write.expiredBeforeMs],
      );
      if (rowCount !== 1) throw new Error('an idempotency key was recorded twice');
      return { kind: 'ran', answer, recordedAtMs: write.nowMs };
    },
    async prune(session, expiredBeforeMs) {
      const { rowCount } = await session.query(
        `DELETE FROM ${table} WHERE key IN (SELECT key FROM ${table} WHERE recorded_at_ms < $1 LIMIT $2)`,
        [expiredBeforeMs, PRUNE_BATCH_ROWS],
      );
      return rowCount;
    },
  };
}
