// Group commit, the worker's half: it owns the write connection, and runs each batch it receives as
// one BEGIN IMMEDIATE … COMMIT, so the whole batch shares one fsync while the main thread's event
// loop goes on serving. Results are posted only after COMMIT has returned: nothing is acknowledged
// before it is on disk. An operation that fails alone (its statement was undone, the transaction
// goes on) fails alone; if SQLite had to roll back the whole transaction, or COMMIT fails, every
// operation of the batch fails, since none of them is on disk.
import { parentPort, workerData } from 'node:worker_threads';
import { connectSqlite, type SqliteDatabase } from './sqlite.js';
import { errorCode, errorMessage, type FromWriter, type GroupCommitSetup, type OpResult, type ToWriter } from './group-commit-protocol.js';

/** Prepares a store's writes on a connection; each runs inside a write transaction, and throws to fail alone. */
export type PrepareWrites<Op, Outcome> = (db: SqliteDatabase) => (op: Op) => Outcome;

class TransactionLost extends Error {}

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
  const runBatch = db.transaction((ops: readonly Op[]): OpResult<Outcome>[] => {
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

  port.on('message', (message: ToWriter<Op>) => {
    if (message.kind === 'close') {
      db.close();
      port.close();
      return;
    }
    let reply: FromWriter<Outcome>;
    try {
      reply = { kind: 'committed', batch: message.batch, results: runBatch.immediate(message.ops) };
    } catch (error) {
      reply = { kind: 'failed', batch: message.batch, message: errorMessage(error), code: errorCode(error) };
    }
    port.postMessage(reply);
  });
}
