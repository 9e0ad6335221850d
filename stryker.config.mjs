// Mutation testing (`npm run mutation`): how much of the code's behaviour the tests pin down.
// Too slow for CI. On a 2-core machine each area runs on its own, one mutant at a time, against the
// fast in-process test files only; the areas are in scripts/mutation-areas.mjs.
//
//   npm run mutation                           every area, one after the other, then the score
//   MUTATION_AREAS='db-sqlite stores' npm run mutation  some areas (the names below)
//
// Each area keeps an incremental file, so a rerun only tests the mutants whose code or tests changed.
import { areas } from './scripts/mutation-areas.mjs';

const area = process.env.MUTATION_AREA ?? '';

const selected = areas[area];
if (selected === undefined)
  throw new Error(
    `run through npm run mutation; MUTATION_AREA must be one of ${Object.keys(areas).join(', ')}`,
  );

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
  // Type errors a mutant makes must not stop the build: TypeScript files only. (The default also
  // takes .html files, and wrote its `// @ts-nocheck` into the scripts of the recorded doc pages.)
  disableTypeChecks: '{src,test,bench,scripts}/**/*.ts',
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
