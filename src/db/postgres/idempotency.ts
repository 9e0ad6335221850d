// Idempotency records on PostgreSQL (idempotency-records.ts), inside the group-commit batch of the
// writes they belong to: a batch that holds keyed writes is one transaction that claims their keys,
// runs the writes that may run together with the unkeyed ones (one statement, as every batch), and
// records the outcomes of the keyed ones, then commits once.
//
// A claimed key is a transaction-scoped advisory lock. It is tied to the transaction, so to the
// connection: when the instance holding it dies, the server drops the connection and the lock with
// it, and a retry runs (or replays what committed). Another instance that tries the lock meanwhile
// answers 409 at once instead of queueing. The claim is a function (installed by the store's
// migrations, claimKeysFunctionSql) so that its lookup is a statement after the lock, with a fresh
// snapshot under READ COMMITTED: whatever committed with a key before its lock was free is seen.
// The primary key on `key` stays the last word: a second record of a live key fails the batch's
// transaction rather than overwriting the first.
import type { KeyedOutcome, KeyedWrite } from '../../common/keyed-writes.js';
import {
  keyedWriteSize,
  PRUNE_BATCH_ROWS,
  RECORD_COLUMNS,
  recordedOutcome,
  type RecordRow,
  type RecordShape,
} from '../idempotency-records.js';
import type { PostgresDatabase, SqlSession } from './postgres.js';

/** pg_try_advisory_xact_lock(class, hashtext(key)): a class of its own, apart from other locks. */
const KEY_LOCK_CLASS = 7_310_003;

/**
 * The claim function planned at each call (plan_cache_mode, for its own statements only): PL/pgSQL
 * would otherwise keep, per connection, a generic plan made while the table was small (a hash join
 * over a scan of the whole table), and nothing replaces it until the table is analyzed, which with
 * autovacuum off is never; each batch then reads every record. Planned at each call, the planner
 * sees the table's current size (its pages, even without statistics) and the batch's keys, and
 * takes one primary-key lookup per key once the table is past a few pages. Planning costs tens of
 * microseconds a batch, not a request. A step of its own, so that released steps keep their text.
 */
export const plannedAtEachCallSql = (name: string): string =>
  `ALTER FUNCTION ${name}(TEXT[], BIGINT[]) SET plan_cache_mode = force_custom_plan`;

/**
 * The claim of a batch's keys: each key's advisory lock is tried, then (a statement later, so on a
 * fresh snapshot) the live record of every key locked is read. One row per key, in order; `free`
 * false means another transaction holds the key. Over a table of `shape` (idempotency-records.ts);
 * a function of the same name made before is replaced. Migrations made it as it is here, then
 * planned it at each call (plannedAtEachCallSql).
 */
export function claimKeysFunctionSql(
  name: string,
  table: string,
  shape: RecordShape = 'outcome',
): string {
  const columns = RECORD_COLUMNS[shape];
  return `DROP FUNCTION IF EXISTS ${name}(TEXT[], BIGINT[]);
    CREATE FUNCTION ${name}(keys TEXT[], expired_before BIGINT[])
    RETURNS TABLE (free BOOLEAN, fingerprint TEXT, ${columns.map(([column, type]) => `${column} ${type}`).join(', ')}, recorded_at_ms TEXT)
    LANGUAGE plpgsql AS $$
    DECLARE
      locked BOOLEAN[];
    BEGIN
      SELECT COALESCE(array_agg(pg_try_advisory_xact_lock(${KEY_LOCK_CLASS}, hashtext(k.key)) ORDER BY k.i), '{}') INTO locked
        FROM unnest(keys) WITH ORDINALITY AS k(key, i);
      RETURN QUERY
        SELECT locked[k.i], r.fingerprint, ${columns.map(([column]) => `r.${column}`).join(', ')}, r.recorded_at_ms::text
        FROM unnest(keys, expired_before) WITH ORDINALITY AS k(key, expired, i)
        LEFT JOIN ${table} r ON locked[k.i] AND r.key = k.key AND r.recorded_at_ms >= k.expired
        ORDER BY k.i;
    END
    $$`;
}

/** A write as it waits in a batch, under its idempotency key when it has one. */
export interface BatchEntry<Op> {
  readonly op: Op;
  readonly key?: KeyedWrite;
}

/** A batch entry's share of the batch's byte bound: its write's, and its key's. */
export function entrySize<Op>(sizeOf: (op: Op) => number): (entry: BatchEntry<Op>) => number {
  return (entry) => sizeOf(entry.op) + (entry.key === undefined ? 0 : keyedWriteSize(entry.key));
}

export interface KeyedBatchOptions<Op, Result, Outcome> {
  readonly db: PostgresDatabase;
  /** The store's table of records and its claim function (claimKeysFunctionSql). */
  readonly table: string;
  readonly claimFunction: string;
  /**
   * Decides and writes `ops` in one statement on `session`, one result each, in order. `keys`
   * holds each op's idempotency key, or null: a journal keeps it beside the write.
   */
  readonly decide: (
    session: SqlSession,
    ops: readonly Op[],
    keys: readonly (string | null)[],
  ) => Promise<readonly Result[]>;
  /** A write's outcome, read from its result: plain data, recorded as JSON under a key. */
  readonly outcome: (op: Op, result: Result) => Outcome;
}

interface ClaimRow extends Omit<RecordRow, 'fingerprint' | 'outcome'> {
  readonly free: boolean;
  readonly fingerprint: string | null;
  readonly outcome: string | null;
}

/** What a batch's decide step does with entries that may carry keys: what became of each write. */
export function keyedBatches<Op, Result, Outcome>(
  options: KeyedBatchOptions<Op, Result, Outcome>,
): (entries: readonly BatchEntry<Op>[]) => Promise<KeyedOutcome<Outcome>[]> {
  type Entry = BatchEntry<Op>;
  type Settled = KeyedOutcome<Outcome>;
  const { db, table, claimFunction, decide, outcome } = options;
  const claimSql = `SELECT free, fingerprint, outcome, recorded_at_ms FROM ${claimFunction}($1::text[], $2::bigint[])`;
  // Only an expired record may be replaced: with a live one (which the claim would have found) the
  // update matches nothing, fewer rows than sent are written, and the transaction is failed.
  const recordSql = `INSERT INTO ${table} (key, fingerprint, outcome, recorded_at_ms)
      SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[])
    ON CONFLICT (key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, outcome = EXCLUDED.outcome, recorded_at_ms = EXCLUDED.recorded_at_ms
    WHERE ${table}.recorded_at_ms < (SELECT e.expired FROM unnest($1::text[], $5::bigint[]) AS e(key, expired) WHERE e.key = EXCLUDED.key)`;

  async function plain(entries: readonly Entry[]): Promise<Settled[]> {
    const ops = entries.map((entry) => entry.op);
    const results = await decide(
      db.writes,
      ops,
      ops.map(() => null),
    );
    return results.map((result, i) => ({ kind: 'ran', outcome: outcome(ops[i] as Op, result) }));
  }

  async function keyed(session: SqlSession, entries: readonly Entry[]): Promise<Settled[]> {
    const settled: (Settled | undefined)[] = entries.map(() => undefined);
    const claimed = entries.flatMap(({ key }, i) => (key === undefined ? [] : [{ i, key }]));
    // One transaction may take one advisory lock twice; so a key met again in the same batch is
    // in flight (the HTTP layer already answers 409 for that, in one process).
    const seen = new Set<string>();
    const first = claimed.filter(({ i, key }) => {
      if (!seen.has(key.key)) {
        seen.add(key.key);
        return true;
      }
      settled[i] = { kind: 'in-flight' };
      return false;
    });
    if (first.length > 0) {
      const { rows } = await session.query<ClaimRow>(claimSql, [
        first.map(({ key }) => key.key),
        first.map(({ key }) => key.expiredBeforeMs),
      ]);
      if (rows.length !== first.length)
        throw new Error(`${claimFunction} answered another number of keys`);
      first.forEach(({ i }, n) => {
        const row = rows[n] as ClaimRow;
        if (!row.free) settled[i] = { kind: 'in-flight' };
        else if (row.fingerprint !== null && row.outcome !== null) {
          settled[i] = recordedOutcome<Outcome>({
            fingerprint: row.fingerprint,
            outcome: row.outcome,
            recorded_at_ms: row.recorded_at_ms,
          });
        }
      });
    }

    const running = entries.flatMap((entry, i) => (settled[i] === undefined ? [{ i, entry }] : []));
    const results =
      running.length === 0
        ? []
        : await decide(
            session,
            running.map(({ entry }) => entry.op),
            running.map(({ entry }) => entry.key?.key ?? null),
          );
    if (results.length !== running.length)
      throw new Error('a batch answered another number of writes');
    const records: { key: KeyedWrite; outcome: Outcome }[] = [];
    running.forEach(({ i, entry: { op, key } }, n) => {
      const ran = outcome(op, results[n] as Result);
      if (key !== undefined) records.push({ key, outcome: ran });
      settled[i] = { kind: 'ran', outcome: ran };
    });
    if (records.length > 0) {
      const { rowCount } = await session.query(recordSql, [
        records.map(({ key }) => key.key),
        records.map(({ key }) => key.fingerprint),
        records.map(({ outcome }) => JSON.stringify(outcome)),
        records.map(({ key }) => key.nowMs),
        records.map(({ key }) => key.expiredBeforeMs),
      ]);
      if (rowCount !== records.length) throw new Error('an idempotency key was recorded twice');
    }
    return settled as Settled[];
  }

  return (entries) =>
    entries.some((entry) => entry.key !== undefined)
      ? db.transaction((session) => keyed(session, entries))
      : plain(entries);
}

/**
 * Deletes up to PRUNE_BATCH_ROWS expired records of `table`, oldest first; returns how many. Plans
 * that read only what they delete, whatever the statistics say: the oldest records are found by
 * walking the index on recorded_at_ms from its start (the order makes it so; without it, on a table
 * never analyzed, the plan scans the table for the first matches, and reads every live row when
 * none has expired), and deleted by their row addresses (a TID scan; by key, the plan may hash-join
 * the whole table). A record renewed meanwhile has another address and a new time: it stays.
 */
export async function pruneKeyRecords(
  session: SqlSession,
  table: string,
  expiredBeforeMs: number,
): Promise<number> {
  const { rowCount } = await session.query(
    `DELETE FROM ${table} WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${table} WHERE recorded_at_ms < $1 ORDER BY recorded_at_ms LIMIT $2)) AND recorded_at_ms < $1`,
    [expiredBeforeMs, PRUNE_BATCH_ROWS],
  );
  return rowCount;
}
