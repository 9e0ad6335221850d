// The to-do store on SQLite. Every write is one statement or one transaction under SQLite's write
// lock, so each method is atomic within and across processes. The scaffold (src/db/sqlite/store.ts)
// runs them: group-committed by a worker thread on a file, so the event loop never waits for the
// disk. Reads stay on this thread's own connection.
import { openSqliteStore } from '../db/sqlite/store.js';
import type { StoreOptions } from '../db/store-options.js';
import { INITIAL_TODO, type TodoInput, type TodoStore } from './store.js';
import type { KeyedOutcome, KeyedWrite } from '../common/keyed-writes.js';
import {
  prepareTodoRead,
  storedTodo,
  todoWriteSize,
  TODO_MIGRATIONS,
  TODO_SERVICE,
  TODO_WRITES,
  type TodoRecordedOutcomes,
  type TodoWrite,
  type TodoWriteOutcome,
  type TodoWriteOutcomes,
} from './store-sqlite-schema.js';
import { decodeTitle, encodeTitle } from './title.js';
import { UNCONDITIONAL } from './write-conditions.js';

type Write = <K extends TodoWrite['kind']>(
  write: Extract<TodoWrite, { kind: K }>,
) => Promise<TodoWriteOutcomes[K]>;
type WriteOnce = <K extends TodoWrite['kind']>(
  write: Extract<TodoWrite, { kind: K }>,
  key: KeyedWrite,
) => Promise<KeyedOutcome<TodoRecordedOutcomes[K]>>;

export async function openSqliteTodoStore(
  location: string,
  options: StoreOptions = {},
): Promise<TodoStore> {
  const store = await openSqliteStore<TodoWrite, TodoWriteOutcome>({
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
  const write = ((op: TodoWrite) => store.write(op)) as Write;
  const writeOnce = ((op: TodoWrite, key: KeyedWrite) => store.writeOnce(op, key)) as WriteOnce;

  return {
    get(id) {
      const row = store.read(() => readRow(id));
      return row === undefined ? undefined : storedTodo(id, row);
    },
    create: (input) =>
      write({ kind: 'create', title: encodeTitle(input.title), done: input.done ? 1 : 0 }),
    async replace(id, input: TodoInput, condition = UNCONDITIONAL) {
      const outcome = await write({
        kind: 'replace',
        id,
        title: encodeTitle(input.title),
        done: input.done ? 1 : 0,
        condition,
      });
      if (outcome.kind === 'stale' || outcome.kind === 'version-required') return outcome;
      return {
        kind: outcome.kind,
        todo: { id, title: input.title, done: input.done, version: outcome.version },
      };
    },
    remove: (id, condition = UNCONDITIONAL) => write({ kind: 'remove', id, condition }),
    createOnce: (input, key) =>
      writeOnce({ kind: 'create', title: encodeTitle(input.title), done: input.done ? 1 : 0 }, key),
    pruneKeys: (expiredBeforeMs) => store.pruneKeys(expiredBeforeMs),
    async finish(id, condition = UNCONDITIONAL) {
      const outcome = await write({ kind: 'finish', id, condition });
      return outcome.kind === 'finished'
        ? { kind: 'finished', todo: storedTodo(id, outcome.row) }
        : outcome;
    },
    replaceOnce: (id, input, condition, key) =>
      writeOnce(
        {
          kind: 'replace',
          id,
          title: encodeTitle(input.title),
          done: input.done ? 1 : 0,
          condition,
        },
        key,
      ),
    removeOnce: (id, condition, key) => writeOnce({ kind: 'remove', id, condition }, key),
    finishOnce: (id, condition, key) => writeOnce({ kind: 'finish', id, condition }, key),
    ping: () => store.ready(),
    close: () => store.close(),
  };
}
