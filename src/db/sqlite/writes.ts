// A SQLite store's writes as the scaffold (sqlite-store.ts) runs them, in this thread for
// `:memory:` or in the group-commit writer thread for a file: the store's own writes, under an
// Idempotency-Key or not, and the pruning of expired key records. A store says only how to apply
// one of its writes and how a write's result reads as its outcome; the lookup of the key, the
// record beside the write (in its transaction: the batch's, its savepoint when one fails alone) and
// the pruning are the same for every store here, as keyedBatches() makes them on PostgreSQL.
//
// The outcome is a function of the store's module, as on PostgreSQL: a keyed write's is made and
// recorded in the writer thread, where only plain data travels; an unkeyed write's result goes back
// as it is, and the scaffold reads its outcome on the main thread.
import type { KeyedOutcome, KeyedWrite } from '../../common/keyed-writes.js';
import type { BatchWrites } from './batch-writes.js';
import type { PrepareWrites } from './group-commit-worker.js';
import { serveGroupCommits } from './group-commit-worker.js';
import { keyedWriteSize } from '../idempotency-records.js';
import { prepareKeyRecords } from './idempotency.js';
import type { SqliteDatabase } from './sqlite.js';

/** A store's own writes, batch by batch (batch-writes.ts); each is told its idempotency key. */
export interface StoreBatchWrites<Op, Result> extends Omit<BatchWrites<Op, Result>, 'apply'> {
  readonly apply: (op: Op, key: string | null) => Result;
}

export interface SqliteWrites<Op, Result, Outcome> {
  /**
   * Prepares the store's writes on a connection; each runs inside a write transaction, and throws
   * to fail alone. `key` is the write's idempotency key, or null: a journal keeps it beside the
   * write.
   */
  readonly prepare: (db: SqliteDatabase) => StoreBatchWrites<Op, Result>;
  /** The write's outcome, read from what it answered: plain data, recorded as JSON under a key. */
  readonly outcome: (op: Op, result: Result) => Outcome;
  /** The table of a store that keeps idempotency records. */
  readonly keys?: { readonly table: string };
}

/** A write as it travels to the writer: the store's own, under a key or not, or a batch of pruning. */
export type SqliteEntry<Op> =
  { readonly op: Op; readonly key?: KeyedWrite } | { readonly pruneBefore: number };

/**
 * What the writer answers an entry: an unkeyed write's result, what became of a keyed one, or how
 * many records were pruned.
 */
export type SqliteEntryOutcome<Result, Outcome> = Result | KeyedOutcome<Outcome> | number;

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
export function prepareEntries<Op, Result, Outcome>(
  writes: SqliteWrites<Op, Result, Outcome>,
): PrepareWrites<SqliteEntry<Op>, SqliteEntryOutcome<Result, Outcome>> {
  return (db) => {
    const store = writes.prepare(db);
    const records =
      writes.keys === undefined ? undefined : prepareKeyRecords(db, writes.keys.table);
    return {
      begin: store.begin,
      end: store.end,
      apply: (entry) => {
        if ('pruneBefore' in entry)
          return records === undefined ? 0 : records.prune(entry.pruneBefore);
        const { op, key } = entry;
        if (key === undefined) return store.apply(op, null);
        if (records === undefined)
          throw new Error('a keyed write reached a store that keeps no idempotency records');
        return (
          records.find(key) ?? records.record(key, writes.outcome(op, store.apply(op, key.key)))
        );
      },
    };
  };
}

/** The writer thread of a store with these writes: its module calls this, with the writes the store was opened with. */
export function serveSqliteWrites<Op, Result, Outcome>(
  writes: SqliteWrites<Op, Result, Outcome>,
): void {
  serveGroupCommits(prepareEntries(writes));
}
