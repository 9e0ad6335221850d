// The group-commit writer thread of the test store (test-writes.ts).
import { serveSqliteWrites } from '../../src/db/sqlite/writes.js';
import { prepareTestWrites, type TestWrite } from './test-writes.js';

serveSqliteWrites<TestWrite, number>({ prepare: prepareTestWrites });
