// A store's writes as a batch runs them: what each write would read afresh is read once a batch,
// under the write lock, and written back once at its end (group-commit-worker.ts), or around one
// write alone (an in-thread store, or an operation in its own savepoint).
import type { Transaction } from 'better-sqlite3';
import type { SqliteDatabase } from './sqlite.js';

/**
 * A store's writes on the writer's connection. A batch's transaction runs `begin`, then `apply` for
 * each operation, then `end`, then COMMIT: what every write of the batch would read afresh (a
 * counter, the time) is read once at its start, under the write lock, kept in memory, and written
 * back once at its end.
 */
export interface BatchWrites<Op, Outcome> {
  /** Reads what the batch's writes go on from; runs again after an operation was undone alone. */
  readonly begin: () => void;
  /** Applies one operation; throws to fail alone. */
  readonly apply: (op: Op) => Outcome;
  /** Writes what the batch's writes kept in memory, before COMMIT. */
  readonly end: () => void;
}

/**
 * Each operation in a transaction of its own (a SAVEPOINT when nested in another): what it kept in
 * memory is written inside it, so that undoing it undoes that too.
 */
export function oneAtATime<Op, Outcome>(
  db: SqliteDatabase,
  writes: BatchWrites<Op, Outcome>,
): Transaction<(op: Op) => Outcome> {
  return db.transaction((op: Op): Outcome => {
    writes.begin();
    const outcome = writes.apply(op);
    writes.end();
    return outcome;
  });
}

/** Writes that keep nothing in memory between them: each reads what it needs. */
export function stateless<Op, Outcome, Args extends unknown[]>(
  apply: (op: Op, ...args: Args) => Outcome,
): { begin: () => void; apply: (op: Op, ...args: Args) => Outcome; end: () => void } {
  return { begin: () => undefined, apply, end: () => undefined };
}
