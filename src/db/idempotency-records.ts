// Idempotency records as both databases keep them: one row per key, holding the request it was
// used for (its fingerprint) and the answer that request got, written in the same transaction as
// the write itself, so that no crash can separate the two. The primary key on `key` is what decides
// between instances: a key is recorded once. A row older than the time to live counts as absent,
// and is pruned in the background.

/** The answer kept with a key: status, content type, headers and body, byte for byte. */
export interface StoredAnswer {
  readonly status: number;
  readonly contentType: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** A keyed write as it travels to the store (and to a writer thread): plain data only. */
export interface KeyedWrite {
  readonly key: string;
  readonly fingerprint: string;
  /** The time recorded with the answer, from the clock of the instance that ran it. */
  readonly nowMs: number;
  /** Records from before this are expired: absent to lookups, and replaced by a new record. */
  readonly expiredBeforeMs: number;
}

export type StoredOutcome =
  | { readonly kind: 'ran'; readonly answer: StoredAnswer; readonly recordedAtMs: number }
  | { readonly kind: 'recorded'; readonly fingerprint: string; readonly answer: StoredAnswer; readonly recordedAtMs: number }
  | { readonly kind: 'in-flight' };

/** Pruning deletes at most this many rows per statement, so that it never holds a lock for long. */
export const PRUNE_BATCH_ROWS = 1_000;

export interface RecordRow {
  readonly fingerprint: string;
  readonly status: number;
  readonly content_type: string;
  readonly headers: string;
  readonly body: string;
  readonly recorded_at_ms: number | string;
}

export function recordedOutcome(row: RecordRow): StoredOutcome {
  return {
    kind: 'recorded',
    fingerprint: row.fingerprint,
    answer: { status: row.status, contentType: row.content_type, headers: JSON.parse(row.headers) as Record<string, string>, body: row.body },
    recordedAtMs: Number(row.recorded_at_ms),
  };
}

/** The table, for either database: `integer` is INTEGER on SQLite and BIGINT on PostgreSQL. */
export function idempotencyTableSql(table: string, integer: 'INTEGER' | 'BIGINT', strict: string): string {
  return `CREATE TABLE ${table} (
      key TEXT PRIMARY KEY,
      fingerprint TEXT NOT NULL,
      status INTEGER NOT NULL,
      content_type TEXT NOT NULL,
      headers TEXT NOT NULL,      -- a JSON object
      body TEXT NOT NULL,
      recorded_at_ms ${integer} NOT NULL
    )${strict};
    CREATE INDEX ${table}_recorded_at ON ${table} (recorded_at_ms)`;
}
