// The linter (`npm run lint`, run by .ci/run after the formatter): typescript-eslint's
// type-checked recommended rules over every TypeScript file, zero warnings. The exceptions below
// are each a rule these rules cannot know holds here, with why.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // The typed client's test imports the types npm test generates first; tsc checks it there.
  {
    ignores: [
      'dist/',
      '.build/',
      'node_modules/',
      'test/client/types/',
      'bench/results/',
      'reports/',
      '.stryker-tmp/',
      'test/client/typed-client.test.ts',
    ],
  },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        project: ['./tsconfig.test.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // node:test's test() and describe() return promises the runner itself awaits: a test file
      // that awaited them would run its tests one after another in the file's own order, which
      // --test-concurrency decides, not the file.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite'] },
          ],
        },
      ],
      // A store's read answers Eventually<T> (src/common/eventually.ts): a value when it has one at
      // once, a promise when it must wait. Promise.all and its kin take both alike, so an array of
      // such answers is what they are for; an array that can hold no promise at all is still an error.
      '@typescript-eslint/await-thenable': ['error', { allowMixedPromiseArrays: true }],
      // A rejection that passes on what a catch caught, unknown to the type checker, passes it on as
      // it was, as a rethrow does (which only-throw-error allows): only the code that threw it could
      // have made it an Error. A rejection with anything else known not to be an Error is reported.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      // A name that starts with _ says it is unused on purpose (a parameter a signature needs).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
    },
  },
);
