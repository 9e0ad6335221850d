// The to-do store on SQLite. Every write is one statement or one transaction under SQLite's write
// lock, so each method is atomic within and across processes. On a file, writes are group-committed
// (src/db/group-commit.ts): many per transaction and fsync, written by a worker thread, so the
// event loop never waits for the disk. Reads stay on this thread's own connection.
import { GroupCommitWriter } from '../db/group-commit.js';
import type { StoreObserver } from '../db/store-observer.js';
import { openSqlite, sqliteAnswers, type SqliteDatabase } from '../db/sqlite.js';
import { directReads, turnScopedReads } from '../db/sqlite-turn-reads.js';
import { exactId, INITIAL_TODO, type Todo, type TodoInput } from './model.js';
import type { TodoStore } from './store.js';
import {
  prepareTodoRead,
  prepareTodoWrites,
  TODO_MIGRATIONS,
  TODO_SERVICE,
  type TodoRow,
  type TodoWrite,
  type TodoWriteOutcome,
  type TodoWriteOutcomes,
  todoWriteSize,
} from './store-sqlite-schema.js';
import { decodeTitle, encodeTitle } from './title.js';

type Write = <K extends TodoWrite['kind']>(write: Extract<TodoWrite, { kind: K }>) => Promise<TodoWriteOutcomes[K]>;

export function openSqliteTodoStore(location: string, synchronous: 'FULL' | 'OFF' = 'FULL', observer?: StoreObserver): TodoStore {
  const db: SqliteDatabase = openSqlite({
    location,
    service: TODO_SERVICE,
    migrations: TODO_MIGRATIONS,
    synchronous,
    seed: (seeding) => {
      seeding.prepare('INSERT INTO todos (id, title, done) VALUES (?, ?, ?)').run(INITIAL_TODO.id, encodeTitle(INITIAL_TODO.title), 0);
    },
  });
  const readRow = prepareTodoRead(db);

  let write: Write;
  let writerHealthy: () => boolean;
  let closeWriter: () => Promise<void>;
  let reads = directReads;
  if (location === ':memory:') {
    // A worker cannot open this thread's :memory: database, and there is no disk to wait for anyway.
    const inThread = db.transaction(prepareTodoWrites(db));
    write = ((op: TodoWrite) => Promise.resolve(inThread.immediate(op))) as Write;
    writerHealthy = () => true;
    closeWriter = async () => undefined;
  } else {
    reads = turnScopedReads(db);
    const writer = new GroupCommitWriter<TodoWrite, TodoWriteOutcome>(
      new URL('./store-sqlite-worker.js', import.meta.url),
      { location, synchronous },
      { sizeOf: todoWriteSize, onCommitted: reads.end, observer },
    );
    write = ((op: TodoWrite) => writer.write(op)) as Write;
    writerHealthy = () => writer.healthy;
    closeWriter = () => writer.close();
  }

  return {
    async get(id) {
      const row = reads.read(() => readRow(id));
      return row === undefined ? undefined : toTodo(id, row);
    },
    async create(input) {
      const id = await write({ kind: 'create', title: encodeTitle(input.title), done: input.done ? 1 : 0 });
      return { id: exactId(id), title: input.title, done: input.done };
    },
    async replace(id, input: TodoInput) {
      const created = await write({ kind: 'replace', id, title: encodeTitle(input.title), done: input.done ? 1 : 0 });
      return { todo: { id, title: input.title, done: input.done }, created };
    },
    async remove(id) {
      return write({ kind: 'remove', id });
    },
    async finish(id) {
      const outcome = await write({ kind: 'finish', id });
      return outcome.kind === 'finished' ? { kind: 'finished', todo: toTodo(id, outcome.row) } : outcome;
    },
    async ping() {
      return writerHealthy() && sqliteAnswers(db, location);
    },
    async close() {
      try {
        await closeWriter();
      } finally {
        reads.end();
        db.close();
      }
    },
  };
}

function toTodo(id: number, row: TodoRow): Todo {
  return { id, title: decodeTitle(row.title), done: row.done === 1 };
}
