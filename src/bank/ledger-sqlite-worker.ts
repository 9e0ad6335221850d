// The ledger's group-commit writer thread: it owns the write connection, and applies each
// withdrawal of a batch with the same statements as the in-thread ledger (ledger-sqlite-schema.ts).
import { openWriterDatabase, serveGroupCommits } from '../db/group-commit-worker.js';
import type { Withdrawal, WithdrawOutcome } from './ledger.js';
import { LEDGER_MIGRATIONS, LEDGER_SERVICE, prepareWithdrawStep } from './ledger-sqlite-schema.js';

serveGroupCommits<Withdrawal, WithdrawOutcome>((setup) => {
  const db = openWriterDatabase(setup, LEDGER_SERVICE, LEDGER_MIGRATIONS);
  const withdraw = prepareWithdrawStep(db);
  return { db, apply: (op) => withdraw(op.account, op.amount) };
});
