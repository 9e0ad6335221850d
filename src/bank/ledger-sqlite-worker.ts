// The group-commit writer: a worker thread that owns the ledger's write connection. Each batch of
// withdrawals is one BEGIN IMMEDIATE … COMMIT, so the batch shares one fsync, and the main thread's
// event loop keeps serving requests while the disk works. Outcomes are posted only after COMMIT has
// returned: nothing is acknowledged before it is on disk. Any failure fails the whole batch, since
// the rollback undid every withdrawal in it.
import { parentPort, workerData } from 'node:worker_threads';
import { openSqlite } from '../db/sqlite.js';
import { encodeOutcome, type FromWorker, type ToWorker, type WorkerSetup } from './ledger-sqlite-protocol.js';
import { LEDGER_MIGRATIONS, LEDGER_SERVICE, prepareWithdrawStep } from './ledger-sqlite-schema.js';

const port = parentPort;
if (port === null) throw new Error('ledger-sqlite-worker runs only as a worker thread');
const setup = workerData as WorkerSetup;

const db = openSqlite({
  location: setup.location,
  service: LEDGER_SERVICE,
  migrations: LEDGER_MIGRATIONS,
  synchronous: setup.synchronous,
  // The main thread created and seeded the database before starting this worker.
  seed: () => {
    throw new Error('the ledger worker found no ledger schema: it never creates one');
  },
});
const withdraw = prepareWithdrawStep(db);

const runBatch = db.transaction((accounts: readonly string[], amounts: readonly number[]) => {
  const codes = new Uint8Array(accounts.length);
  const balances = new Float64Array(accounts.length);
  for (let i = 0; i < accounts.length; i++) {
    encodeOutcome(withdraw(accounts[i] as string, amounts[i] as number), codes, balances, i);
  }
  return { codes, balances };
});

port.on('message', (message: ToWorker) => {
  if (message.kind === 'close') {
    db.close();
    port.close();
    return;
  }
  let reply: FromWorker;
  try {
    const { codes, balances } = runBatch.immediate(message.accounts, message.amounts);
    reply = { kind: 'committed', batch: message.batch, codes, balances };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    reply = {
      kind: 'failed',
      batch: message.batch,
      message: error instanceof Error ? error.message : String(error),
      code: typeof code === 'string' ? code : undefined,
    };
  }
  port.postMessage(reply, reply.kind === 'committed' ? [reply.codes.buffer, reply.balances.buffer] : []);
});
