// A SQLite store's writes as the scaffold (sqlite-store.ts) runs them, in this thread for
// `:memory:` or in the group-commit writer thread for a file: the store's own writes, the same
// writes under an Idempotency-Key, and the pruning of expired key records. A store says only how
// to apply one of its writes and what a keyed write's outcome records; the lookup of the key, the
// record beside the write (in its transaction: the batch's, its savepoint when one fails alone) and
// the pruning are the same for every store here, as keyedBatches() makes them on PostgreSQL.
//
// What an outcome records is a function of the store's module, not a closure given with the write
// as on PostgreSQL: the record is written in the writer thread, where only plain data travels.
import type { KeyedOutcome, KeyedWrite } from '../../common/keyed-writes.js';
import type { PrepareWrites } from './group-commit-worker.js';
import { serveGroupCommits } from './group-commit-worker.js';
import { keyedWriteSize } from '../idempotency-records.js';
import { prepareKeyRecords } from './idempotency.js';
import type { SqliteDatabase } from './sqlite.js';

export interface SqliteWrites<Op, Outcome> {
  /**
   * Prepares the store's writes on a connection; each runs inside a write transaction, and throws
   * to fail alone. `key` is the write's idempotency key, or null: a journal keeps it beside the
   * write.
   */
  readonly prepare: (db: SqliteDatabase) => (op: Op, key: string | null) => Outcome;
  /**
   * A store that keeps idempotency records: their table, and what a keyed write records of its
   * outcome (plain data, recorded as JSON, and answered again on a replay).
   */
  readonly keys?: {
    readonly table: string;
    readonly recorded: (op: Op, outcome: Outcome) => unknown;
  };
}

/** A write as it travels to the writer: the store's own, under a key or not, or a batch of pruning. */
export type SqliteEntry<Op> =
  { readonly op: Op; readonly key?: KeyedWrite } | { readonly pruneBefore: number };

/** What the writer answers an entry: the write's outcome, what became of a keyed one, or how many records were pruned. */
export type SqliteEntryOutcome<Outcome> = Outcome | KeyedOutcome<unknown> | number;

/** An entry's share of a batch's byte bound: its write's, and its key's. */
export function sqliteEntrySize<Op>(
  sizeOf: (op: Op) => number,
): (entry: SqliteEntry<Op>) => number {
  return (entry) =>
    'pruneBefore' in entry
      ? 16
      : sizeOf(entry.op) + (entry.key === undefined ? 0 : keyedWriteSize(entry.key));
}

/**
 * The entries' writes on a connection. A keyed write whose key has a live record runs nothing and
 * answers the record; else it runs and its outcome is recorded in the same transaction, under
 * SQLite's one write lock, so no other writer (of this process or another on the file) comes
 * between the lookup and the record.
 */
export function prepareEntries<Op, Outcome>(
  writes: SqliteWrites<Op, Outcome>,
): PrepareWrites<SqliteEntry<Op>, SqliteEntryOutcome<Outcome>> {
  return (db) => {
    const apply = writes.prepare(db);
    const keys =
      writes.keys === undefined
        ? undefined
        : { ...writes.keys, records: prepareKeyRecords(db, writes.keys.table) };
    return (entry) => {
      if ('pruneBefore' in entry)
        return keys === undefined ? 0 : keys.records.prune(entry.pruneBefore);
      if (entry.key === undefined) return apply(entry.op, null);
      if (keys === undefined)
        throw new Error('a keyed write reached a store that keeps no idempotency records');
      return (
        keys.records.find(entry.key) ??
        keys.records.record(entry.key, keys.recorded(entry.op, apply(entry.op, entry.key.key)))
      );
    };
  };
}

/** The writer thread of a store with these writes: its module calls this, with the writes the store was opened with. */
export function serveSqliteWrites<Op, Outcome>(writes: SqliteWrites<Op, Outcome>): void {
  serveGroupCommits(prepareEntries(writes));
}
