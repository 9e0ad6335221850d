// Mutation testing (`npm run mutation`): how much of the code's behaviour the tests pin down.
// Too slow for CI. On a 2-core machine each area runs on its own, one mutant at a time, against the
// fast in-process test files only (servers in this process, a real SQLite file and a real
// PostgreSQL); the tests that spawn processes (the CLI, kill -9, several instances, the proxy that
// cuts the database) would multiply the run time and cannot report what they cover.
//
//   npm run mutation                           every area, one after the other, then the score
//   MUTATION_AREAS='db-sqlite stores' npm run mutation  some areas (the names below)
//
// Each area keeps an incremental file, so a rerun only tests the mutants whose code or tests changed.
const area = process.env.MUTATION_AREA ?? '';

// Each area: the files it mutates, and the in-process test files that exercise them. Small enough
// that one area runs in well under an hour at concurrency 1.
const serviceTests = ['.build/test/todo/todo-service.test.js', '.build/test/bank/bank-service.test.js'];
const sqliteTests = ['.build/test/db/*.test.js', '.build/test/todo/store-*.test.js', '.build/test/bank/ledger-*.test.js'];
const storeTests = ['.build/test/store/*.test.js', ...sqliteTests];
// Two slow files stay out: hostile-input (6,000 random requests, 10 s) guards against crashes and
// leaks, which the contract tests pin down more precisely; openapi-answers (the corpus in every
// mode, each answer validated by Ajv, 36 s) checks the documents, which the conformance replay and
// the service tests check for the answers themselves at a fraction of the time per mutant.
const httpTests = ['.build/test/http/!(hostile-input|openapi-answers).test.js', '.build/test/conformance/*.test.js', ...serviceTests];
export const areas = {
  // The tests that exercise these files directly: per mutant, a fifth of the time of httpTests.
  'http-limits': {
    mutate: ['src/http/{body,route-table,routing}.ts'],
    tests: ['.build/test/http/{contract-layer,route-table}.test.js', '.build/test/conformance/*.test.js', ...serviceTests],
  },
  'http-contract': { mutate: ['src/http/{catalogue,errors,render,route}.ts'], tests: httpTests },
  'http-pipeline': { mutate: ['src/http/{app,metrics-route,request-id,request-metrics,request-observer}.ts'], tests: httpTests },
  'http-json': { mutate: ['src/http/json-*.ts'], tests: httpTests },
  'http-lax': { mutate: ['src/http/{lax,schema}.ts'], tests: httpTests },
  'http-docs': { mutate: ['src/http/docs.ts'], tests: httpTests },
  'db-sqlite': { mutate: ['src/db/{batcher,group-commit,group-commit-worker,group-commit-protocol,sqlite,sqlite-turn-reads,store-options}.ts'], tests: sqliteTests },
  'db-postgres': { mutate: ['src/db/postgres*.ts'], tests: ['.build/test/store/*.test.js'] },
  stores: { mutate: ['src/todo/store-*.ts', 'src/bank/ledger-*.ts'], tests: [...storeTests, ...serviceTests] },
};

const selected = areas[area];
if (selected === undefined) throw new Error(`run through npm run mutation; MUTATION_AREA must be one of ${Object.keys(areas).join(', ')}`);

export default {
  mutate: selected.mutate,
  testRunner: 'tap',
  tap: {
    testFiles: selected.tests,
    // The second import carries coverage out of worker threads (the group-commit writers).
    nodeArgs: ['-r', '{{hookFile}}', '--import', './.build/test/support/mutation-coverage.js'],
    forceBail: true,
  },
  // The TypeScript is compiled once, with the mutants switched in, and the built tests run.
  buildCommand: 'tsc -p tsconfig.test.json',
  coverageAnalysis: 'perTest',
  concurrency: Number(process.env.MUTATION_CONCURRENCY ?? 1),
  incremental: true,
  incrementalFile: `reports/mutation/${area}.incremental.json`,
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: `reports/mutation/${area}.json` },
  // A mutant that makes a request hang is caught by this, not by the suites' own (longer) limits.
  timeoutMS: 3_000,
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
