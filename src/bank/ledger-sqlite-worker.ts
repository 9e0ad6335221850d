// The ledger's group-commit writer thread: it owns the write connection, and applies each
// withdrawal of a batch with the same statements as the in-thread ledger (ledger-sqlite-schema.ts).
import { serveGroupCommits } from '../db/group-commit-worker.js';
import type { Withdrawal, WithdrawOutcome } from './ledger.js';
import { prepareWithdrawal } from './ledger-sqlite-schema.js';

serveGroupCommits<Withdrawal, WithdrawOutcome>(prepareWithdrawal);
