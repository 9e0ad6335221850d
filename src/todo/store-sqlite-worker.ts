// The to-do store's group-commit writer thread: it owns the write connection, and applies each
// write of a batch with the same statements as the in-thread store (store-sqlite-schema.ts).
import { serveGroupCommits } from '../db/group-commit-worker.js';
import { openSqlite } from '../db/sqlite.js';
import { prepareTodoWrites, TODO_MIGRATIONS, TODO_SERVICE, type TodoWrite, type TodoWriteOutcome } from './store-sqlite-schema.js';

serveGroupCommits<TodoWrite, TodoWriteOutcome>((setup) => {
  const db = openSqlite({
    location: setup.location,
    service: TODO_SERVICE,
    migrations: TODO_MIGRATIONS,
    synchronous: setup.synchronous,
    // The main thread created and seeded the database before starting this thread.
    seed: () => {
      throw new Error('the to-do writer found no to-do schema: it never creates one');
    },
  });
  return { db, apply: prepareTodoWrites(db) };
});
