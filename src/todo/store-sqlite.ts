// The to-do store on SQLite. Every write is one statement or one transaction under SQLite's write
// lock, so each method is atomic within and across processes. The scaffold (src/db/sqlite/store.ts)
// runs them: group-committed by a worker thread on a file, so the event loop never waits for the
// disk. Reads stay on this thread's own connection.
import { openSqliteStore } from '../db/sqlite/store.js';
import type { StoreOptions } from '../db/store-options.js';
import { INITIAL_TODO, type TodoStore } from './store.js';
import {
  prepareTodoRead,
  storedTodo,
  TODO_MIGRATIONS,
  TODO_SERVICE,
  TODO_WRITES,
} from './store-sqlite-schema.js';
import { encodeTitle } from './title.js';
import {
  todoWrites,
  todoWriteSize,
  type TodoOutcome,
  type TodoWrite,
  type TodoWriteResult,
} from './writes.js';

export async function openSqliteTodoStore(
  location: string,
  options: StoreOptions = {},
): Promise<TodoStore> {
  const store = await openSqliteStore<TodoWrite, TodoWriteResult, TodoOutcome>({
    location,
    service: TODO_SERVICE,
    migrations: TODO_MIGRATIONS,
    seed: (seeding) => {
      seeding.prepare('UPDATE todo_revision SET last = 1').run();
      seeding
        .prepare('INSERT INTO todos (id, title, done, version) VALUES (?, ?, ?, 1)')
        .run(INITIAL_TODO.id, encodeTitle(INITIAL_TODO.title), 0);
    },
    writes: TODO_WRITES,
    sizeOf: todoWriteSize,
    writerScript: new URL('./store-sqlite-worker.js', import.meta.url),
    synchronous: options.sqliteSynchronous,
    log: options.log,
    observer: options.observer,
    keyTtlMs: options.idempotencyTtlMs,
  });
  const readRow = prepareTodoRead(store.db);

  return {
    // A read on this thread's connection starts nothing that could be given up: no work to bound.
    get(id) {
      const row = store.read(() => readRow(id));
      return row === undefined ? undefined : storedTodo(id, row);
    },
    ...todoWrites((op, key, work) => store.write(op, key, work)),
    pruneKeys: (expiredBeforeMs) => store.pruneKeys(expiredBeforeMs),
    ping: () => store.ready(),
    close: () => store.close(),
  };
}
