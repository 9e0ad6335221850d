// A store's writes for testing the SQLite scaffold's group commit with a writer thread of its own
// (test-writer.ts): a value inserted into a table that refuses negatives, a writer thread that dies
// while it applies a write, a write that fails after SQLite rolled back the whole transaction (as
// on a full disk), or a look at the writer connection's synchronous setting.
import type { SqliteDatabase } from '../../src/db/sqlite/sqlite.js';
import type { SqliteWrites, StoreBatchWrites } from '../../src/db/sqlite/writes.js';
import { stateless } from '../../src/db/sqlite/batch-writes.js';

export type TestWrite =
  | { readonly kind: 'insert'; readonly value: number }
  /** The writer thread ends: with an exit code, or by an error thrown outside any write. */
  | { readonly kind: 'die'; readonly how: 'exit' | 'throw' }
  /** Ends the batch's transaction (ROLLBACK), then fails: what SQLite does on SQLITE_FULL or SQLITE_IOERR. */
  | { readonly kind: 'rollback-and-fail' }
  /** Answers PRAGMA synchronous of the writer's connection: 0 OFF, 1 NORMAL, 2 FULL. */
  | { readonly kind: 'synchronous' };

export const TEST_MIGRATIONS = [
  { version: 1, sql: 'CREATE TABLE v (x INTEGER NOT NULL CHECK (x >= 0))' },
];

export function prepareTestWrites(db: SqliteDatabase): StoreBatchWrites<TestWrite, number> {
  const insert = db.prepare<[number]>('INSERT INTO v (x) VALUES (?)');
  return stateless((write: TestWrite) => {
    if (write.kind === 'insert') return Number(insert.run(write.value).lastInsertRowid);
    if (write.kind === 'synchronous') return db.pragma('synchronous', { simple: true }) as number;
    if (write.kind === 'rollback-and-fail') {
      db.exec('ROLLBACK');
      throw new Error('the transaction was rolled back under the write');
    }
    if (write.how === 'exit') process.exit(7);
    setImmediate(() => {
      throw new Error('the writer thread broke');
    });
    return 0;
  });
}

/** The test writes, for the store (test-store.ts) and its writer thread: a write's outcome is its number. */
export const TEST_WRITES: SqliteWrites<TestWrite, number, number> = {
  prepare: prepareTestWrites,
  outcome: (_write, value) => value,
};
