// The to-do store's group-commit writer thread: it owns the write connection, and applies each
// write of a batch with the same statements as the in-thread store (store-sqlite-schema.ts).
import { serveSqliteWrites } from '../db/sqlite/writes.js';
import { TODO_WRITES } from './store-sqlite-schema.js';

serveSqliteWrites(TODO_WRITES);
