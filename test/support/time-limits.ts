// Every suite has a time limit, so that a promise that never settles fails its suite instead of
// hanging `npm test`. The limits are generous: other work may load the machine while tests run.
// `npm test` also gives every single test a limit (--test-timeout), a backstop for the files of
// plain top-level tests (the decoder's and the coercions' unit tests, which are synchronous).

/** A suite of in-process tests: servers in this process, a SQLite file or a PostgreSQL database. */
export const SUITE_TIMEOUT_MS = 120_000;

/** A suite that starts service processes or databases many times over (kill -9, restarts, outages). */
export const PROCESS_SUITE_TIMEOUT_MS = 600_000;
