// The ledger's group-commit writer thread: it owns the write connection, and applies each
// withdrawal of a batch with the same statements as the in-thread ledger (ledger-sqlite-schema.ts).
import { serveGroupCommits } from '../db/group-commit-worker.js';
import { openSqlite } from '../db/sqlite.js';
import type { WithdrawOutcome } from './ledger.js';
import { LEDGER_MIGRATIONS, LEDGER_SERVICE, prepareWithdrawStep, type Withdrawal } from './ledger-sqlite-schema.js';

serveGroupCommits<Withdrawal, WithdrawOutcome>((setup) => {
  const db = openSqlite({
    location: setup.location,
    service: LEDGER_SERVICE,
    migrations: LEDGER_MIGRATIONS,
    synchronous: setup.synchronous,
    // The main thread created and seeded the database before starting this thread.
    seed: () => {
      throw new Error('the ledger writer found no ledger schema: it never creates one');
    },
  });
  const withdraw = prepareWithdrawStep(db);
  return { db, apply: (op) => withdraw(op.account, op.amount) };
});
