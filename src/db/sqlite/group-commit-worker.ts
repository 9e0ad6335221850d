// Group commit, the worker's half: it owns the write connection, and runs each batch it receives as
// one BEGIN IMMEDIATE … COMMIT, so the whole batch shares one fsync while the main thread's event
// loop goes on serving. Results are posted only after COMMIT has returned: nothing is acknowledged
// before it is on disk. An operation that fails alone (its statement was undone, the transaction
// goes on) fails alone; if SQLite had to roll back the whole transaction, or COMMIT fails, every
// operation of the batch fails, since none of them is on disk.
import { parentPort, workerData } from 'node:worker_threads';
import { connectSqlite, type SqliteDatabase } from './sqlite.js';
import {
  errorCode,
  errorMessage,
  type FromWriter,
  type GroupCommitSetup,
  type OpResult,
  type ToWriter,
} from './group-commit-protocol.js';

/** Prepares a store's writes on a connection; each runs inside a write transaction, and throws to fail alone. */
export type PrepareWrites<Op, Outcome> = (db: SqliteDatabase) => (op: Op) => Outcome;

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
  const apply = prepare(db);

  // Nested inside the batch's transaction this runs in a SAVEPOINT: an operation that fails is
  // undone whole, however many statements it had run, and the rest of the batch goes on.
  const applyAlone = db.transaction(apply);
  const runBatchAlone = db.transaction((ops: readonly Op[]): OpResult<Outcome>[] => {
    const results: OpResult<Outcome>[] = [];
    for (const op of ops) {
      try {
        results.push({ ok: true, outcome: applyAlone(op) });
      } catch (error) {
        if (!db.inTransaction) throw new TransactionLost(errorMessage(error));
        results.push({ ok: false, message: errorMessage(error), code: errorCode(error) });
      }
    }
    return results;
  });
  // Operations almost never fail, and a savepoint around each (two statements more per operation)
  // is most of what the writer does besides the operation itself. So a batch is first run without
  // them; should any operation throw, that transaction is rolled back whole, nothing of it having
  // been committed, and the batch is run again with a savepoint around each operation, which gives
  // every operation the outcome it would have had alone.
  const runBatchTogether = db.transaction((ops: readonly Op[]): OpResult<Outcome>[] =>
    ops.map((op): OpResult<Outcome> => {
      try {
        return { ok: true, outcome: apply(op) };
      } catch (error) {
        throw new OperationFailed(error);
      }
    }),
  );
  const runBatch = (ops: readonly Op[]): OpResult<Outcome>[] => {
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
      reply = { kind: 'committed', batch: message.batch, results: runBatch(message.ops) };
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
