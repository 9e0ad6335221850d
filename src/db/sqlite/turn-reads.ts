// Reads that share one read transaction per turn of the event loop. In WAL mode every transaction
// takes and drops a read lock on the -shm file (two fcntl calls and an fstat, about 2.5 µs), which
// is most of the cost of a point read; a turn under load serves many reads, so they share one lock.
//
// What a read sees: the database as of the turn's first read. The snapshot ends when the turn ends
// and whenever this process acknowledges a write (the store calls end() before resolving it), so a
// read never misses a write this process acknowledged. A write acknowledged by another process on
// the same file is seen from the next turn on: a request sent after that acknowledgement is read
// from its socket in a later turn, so it sees the write too (only requests pipelined on one
// connection behind an earlier one could be read within the turn; HTTP clients rarely pipeline).
//
// Only for a connection that never writes while a snapshot is open: here, writes go to the
// group-commit worker's connection.
//
// Ending a snapshot can fail too (a damaged file, an I/O error), and it often runs from
// setImmediate, where a throw would take the process down: such a failure is handed to `onError`
// and the transaction is rolled back instead, so the next read begins afresh.
import type { SqliteDatabase } from './sqlite.js';

export interface TurnReads {
  /** Runs `read` inside this turn's read transaction, beginning one if there is none. */
  read<T>(read: () => T): T;
  /** Ends the current read transaction, if any: the next read sees every commit so far. */
  readonly end: () => void;
}

export function turnScopedReads(db: SqliteDatabase, onError: (error: unknown) => void): TurnReads {
  const begin = db.prepare('BEGIN');
  const commit = db.prepare('COMMIT');
  let open = false;
  const end = (): void => {
    if (!open) return;
    open = false;
    if (!db.open || !db.inTransaction) return;
    try {
      commit.run();
    } catch (error) {
      onError(error);
      try {
        if (db.inTransaction) db.exec('ROLLBACK');
      } catch (rollbackError) {
        onError(rollbackError);
      }
    }
  };
  return {
    read(read) {
      if (!open) {
        begin.run();
        open = true;
        setImmediate(end);
      }
      return read();
    },
    end,
  };
}

/** For a connection whose reads are not worth sharing (`:memory:`, no locks) or that also writes. */
export const directReads: TurnReads = { read: (read) => read(), end: () => undefined };
