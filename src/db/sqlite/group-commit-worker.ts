// Group commit, the worker's half: it owns the write connection, and runs each batch it receives as
// one BEGIN IMMEDIATE … COMMIT, so the whole batch shares one fsync while the main thread's event
// loop goes on serving. Results are posted only after COMMIT has returned: nothing is acknowledged
// before it is on disk. An operation that fails alone (its statement was undone, the transaction
// goes on) fails alone; if SQLite had to roll back the whole transaction, or COMMIT fails, every
// operation of the batch fails, since none of them is on disk.
import { parentPort, workerData } from 'node:worker_threads';
import { connectSqlite, type SqliteDatabase } from './sqlite.js';
import { oneAtATime, type BatchWrites } from './batch-writes.js';
import {
  errorCode,
  errorMessage,
  type FromWriter,
  type GroupCommitSetup,
  type OpFailure,
  type ToWriter,
} from './group-commit-protocol.js';

/** Prepares a store's writes on a connection; each runs inside a write transaction. */
export type PrepareWrites<Op, Outcome> = (db: SqliteDatabase) => BatchWrites<Op, Outcome>;

/** What a committed batch answers (group-commit-protocol.ts). */
interface Answered<Outcome> {
  readonly outcomes: readonly (Outcome | undefined)[];
  readonly failures?: readonly OpFailure[];
}

class TransactionLost extends Error {}

/** An operation threw while its batch ran without savepoints: the batch is run again with them. */
class OperationFailed extends Error {
  constructor(readonly error: unknown) {
    super(errorMessage(error));
  }
}

export function serveGroupCommits<Op, Outcome>(prepare: PrepareWrites<Op, Outcome>): void {
  const port = parentPort;
  if (port === null) throw new Error('a group-commit writer runs only as a worker thread');
  const setup = workerData as GroupCommitSetup;
  // The main thread migrated and seeded the database before starting this thread.
  const db = connectSqlite(setup.location, setup.synchronous);
  const writes = prepare(db);

  // Nested inside the batch's transaction this runs in a SAVEPOINT: an operation that fails is
  // undone whole, however many statements it had run, and the rest of the batch goes on.
  const applyAlone = oneAtATime(db, writes);
  const runBatchAlone = db.transaction((ops: readonly Op[]): Answered<Outcome> => {
    const outcomes: (Outcome | undefined)[] = [];
    const failures: OpFailure[] = [];
    for (const [index, op] of ops.entries()) {
      try {
        outcomes.push(applyAlone(op));
      } catch (error) {
        if (!db.inTransaction) throw new TransactionLost(errorMessage(error));
        outcomes.push(undefined);
        failures.push({ index, message: errorMessage(error), code: errorCode(error) });
      }
    }
    return { outcomes, failures };
  });
  // Operations almost never fail, and a savepoint around each (two statements more per operation)
  // is most of what the writer does besides the operation itself. So a batch is first run without
  // them; should any operation throw, that transaction is rolled back whole, nothing of it having
  // been committed, and the batch is run again with a savepoint around each operation, which gives
  // every operation the outcome it would have had alone.
  const runBatchTogether = db.transaction((ops: readonly Op[]): Answered<Outcome> => {
    writes.begin();
    const outcomes = ops.map((op): Outcome => {
      try {
        return writes.apply(op);
      } catch (error) {
        throw new OperationFailed(error);
      }
    });
    writes.end();
    return { outcomes };
  });
  const runBatch = (ops: readonly Op[]): Answered<Outcome> => {
    try {
      return runBatchTogether.immediate(ops);
    } catch (error) {
      // Only an operation's failure is tried again (db.transaction() has rolled the whole
      // transaction back before rethrowing); a lock not taken or a COMMIT refused is the batch's.
      if (!(error instanceof OperationFailed)) throw error;
      return runBatchAlone.immediate(ops);
    }
  };

  port.on('message', (message: ToWriter<Op>) => {
    if (message.kind === 'close') {
      db.close();
      port.close();
      return;
    }
    let reply: FromWriter<Outcome>;
    try {
      reply = { kind: 'committed', batch: message.batch, ...runBatch(message.ops) };
    } catch (error) {
      reply = {
        kind: 'failed',
        batch: message.batch,
        message: errorMessage(error),
        code: errorCode(error),
      };
    }
    port.postMessage(reply);
  });
}
