// The group-commit writer thread of the test store (test-writes.ts).
import { serveGroupCommits } from '../../src/db/group-commit-worker.js';
import { prepareTestWrites, type TestWrite } from './test-writes.js';

serveGroupCommits<TestWrite, number>(prepareTestWrites);
