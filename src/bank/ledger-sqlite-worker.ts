// The ledger's group-commit writer thread: it owns the write connection, and applies each write of
// a batch with the same statements as the in-thread ledger (ledger-sqlite-schema.ts).
import { serveGroupCommits } from '../db/group-commit-worker.js';
import { prepareLedgerWrites, type LedgerWrite, type LedgerWriteOutcome } from './ledger-sqlite-schema.js';

serveGroupCommits<LedgerWrite, LedgerWriteOutcome>(prepareLedgerWrites);
