// A store's writes for testing the SQLite scaffold's group commit with a writer thread of its own
// (test-writer.ts): a value inserted into a table that refuses negatives, or a writer thread that
// dies while it applies a write.
import type { SqliteDatabase } from '../../src/db/sqlite.js';

export type TestWrite =
  | { readonly kind: 'insert'; readonly value: number }
  /** The writer thread ends: with an exit code, or by an error thrown outside any write. */
  | { readonly kind: 'die'; readonly how: 'exit' | 'throw' };

export const TEST_MIGRATIONS = [{ version: 1, sql: 'CREATE TABLE v (x INTEGER NOT NULL CHECK (x >= 0))' }];

export function prepareTestWrites(db: SqliteDatabase): (write: TestWrite) => number {
  const insert = db.prepare<[number]>('INSERT INTO v (x) VALUES (?)');
  return (write) => {
    if (write.kind === 'insert') return Number(insert.run(write.value).lastInsertRowid);
    if (write.how === 'exit') process.exit(7);
    setImmediate(() => {
      throw new Error('the writer thread broke');
    });
    return 0;
  };
}
