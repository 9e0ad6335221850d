// The group-commit writer thread of the test store (test-writes.ts).
import { serveSqliteWrites } from '../../src/db/sqlite/writes.js';
import { TEST_WRITES } from './test-writes.js';

serveSqliteWrites(TEST_WRITES);
