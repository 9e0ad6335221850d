// The to-do store's group-commit writer thread: it owns the write connection, and applies each
// write of a batch with the same statements as the in-thread store (store-sqlite-schema.ts).
import { serveGroupCommits } from '../db/group-commit-worker.js';
import { prepareTodoWrites, type TodoWrite, type TodoWriteOutcome } from './store-sqlite-schema.js';

serveGroupCommits<TodoWrite, TodoWriteOutcome>(prepareTodoWrites);
