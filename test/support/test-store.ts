// A SQLite file store of the test writes (test-writes.ts), group-committed by their own writer
// thread (test-writer.ts): the scaffold of src/db/sqlite/store.ts with nothing of a service in it.
import {
  openSqliteStore,
  type SqliteStore,
  type SqliteStoreSpec,
} from '../../src/db/sqlite/store.js';
import { TEST_MIGRATIONS, TEST_WRITES, type TestWrite } from './test-writes.js';

export function openTestWriteStore(
  location: string,
  more: Partial<
    Pick<SqliteStoreSpec<TestWrite, number, number>, 'synchronous' | 'observer' | 'log'>
  > = {},
): Promise<SqliteStore<TestWrite, number>> {
  return openSqliteStore<TestWrite, number, number>({
    location,
    service: 'test-writes',
    migrations: TEST_MIGRATIONS,
    seed: () => undefined,
    writes: TEST_WRITES,
    sizeOf: () => 16,
    writerScript: new URL('./test-writer.js', import.meta.url),
    ...more,
  });
}
