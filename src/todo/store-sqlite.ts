// The to-do store on SQLite. Every write is one statement or one transaction under SQLite's write
// lock, so each method is atomic within and across processes. The scaffold (src/db/sqlite/store.ts)
// runs them: group-committed by a worker thread on a file, so the event loop never waits for the
// disk. Reads stay on this thread's own connection.
import { openSqliteStore } from '../db/sqlite/store.js';
import type { StoreOptions } from '../db/store-options.js';
import { INITIAL_TODO, type TodoInput, type TodoStore } from './store.js';
import type { KeyedOutcome, KeyedWrite } from '../common/keyed-writes.js';
import type { Work } from '../common/work.js';
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

type Write = <K extends TodoWrite['kind']>(
  write: Extract<TodoWrite, { kind: K }>,
  work: Work,
) => Promise<TodoWriteOutcomes[K]>;
type WriteOnce = <K extends TodoWrite['kind']>(
  write: Extract<TodoWrite, { kind: K }>,
  key: KeyedWrite,
  work: Work,
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
  const write = ((op: TodoWrite, work: Work) => store.write(op, work)) as Write;
  const writeOnce = ((op: TodoWrite, key: KeyedWrite, work: Work) =>
    store.writeOnce(op, key, work)) as WriteOnce;

  return {
    // A read on this thread's connection starts nothing that could be given up: no work to bound.
    get(id) {
      const row = store.read(() => readRow(id));
      return row === undefined ? undefined : storedTodo(id, row);
    },
    create: (input, work) =>
      write({ kind: 'create', title: encodeTitle(input.title), done: input.done ? 1 : 0 }, work),
    async replace(id, input: TodoInput, condition, work) {
      const outcome = await write(
        {
          kind: 'replace',
          id,
          title: encodeTitle(input.title),
          done: input.done ? 1 : 0,
          condition,
        },
        work,
      );
      if (outcome.kind === 'stale' || outcome.kind === 'version-required') return outcome;
      return {
        kind: outcome.kind,
        todo: { id, title: input.title, done: input.done, version: outcome.version },
      };
    },
    remove: (id, condition, work) => write({ kind: 'remove', id, condition }, work),
    createOnce: (input, key, work) =>
      writeOnce(
        { kind: 'create', title: encodeTitle(input.title), done: input.done ? 1 : 0 },
        key,
        work,
      ),
    pruneKeys: (expiredBeforeMs) => store.pruneKeys(expiredBeforeMs),
    async finish(id, condition, work) {
      const outcome = await write({ kind: 'finish', id, condition }, work);
      return outcome.kind === 'finished'
        ? { kind: 'finished', todo: storedTodo(id, outcome.row) }
        : outcome;
    },
    replaceOnce: (id, input, condition, key, work) =>
      writeOnce(
        {
          kind: 'replace',
          id,
          title: encodeTitle(input.title),
          done: input.done ? 1 : 0,
          condition,
        },
        key,
        work,
      ),
    removeOnce: (id, condition, key, work) =>
      writeOnce({ kind: 'remove', id, condition }, key, work),
    finishOnce: (id, condition, key, work) =>
      writeOnce({ kind: 'finish', id, condition }, key, work),
    ping: () => store.ready(),
    close: () => store.close(),
  };
}
