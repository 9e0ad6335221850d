// The ledger's group-commit writer thread: it owns the write connection, and applies each write of
// a batch with the same statements as the in-thread ledger (ledger-sqlite-schema.ts).
import { serveSqliteWrites } from '../db/sqlite/writes.js';
import { LEDGER_WRITES } from './ledger-sqlite-schema.js';

serveSqliteWrites(LEDGER_WRITES);
