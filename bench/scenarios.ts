// What `npm run bench` measures: each scenario is one request, sent over and over at a few
// concurrencies, with the status every answer must have and the service that answers it. The bare
// node:http server (baseline.ts) answers the same request beside it.
import { FRESH_KEY, type BenchRequest } from './load.js';

export interface Scenario {
  readonly name: string;
  readonly request: BenchRequest;
  readonly expectedStatus: number;
  readonly service: 'todo' | 'bank';
  /** Ids and balances differ between servers, so such bodies are compared with their digits aside. */
  readonly bodyCheck: 'exact' | 'digits-aside';
  /** A write on disk before its answer: also measured beside the bare server writing to SQLite. */
  readonly durable?: boolean;
  /** Also measured on PostgreSQL, against pgbench running these statements, one request per transaction. */
  readonly pgbenchScript?: string;
}

const JSON_TYPE = 'application/json';

export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'GET /todos/1',
    request: { method: 'GET', path: '/todos/1' },
    expectedStatus: 200,
    service: 'todo',
    bodyCheck: 'exact',
  },
  {
    name: 'GET /accounts/alice',
    request: { method: 'GET', path: '/accounts/alice' },
    expectedStatus: 200,
    service: 'bank',
    bodyCheck: 'digits-aside',
  },
  {
    name: 'POST /todos {"done":true} (422)',
    request: { method: 'POST', path: '/todos', body: '{"done":true}', contentType: JSON_TYPE },
    expectedStatus: 422,
    service: 'todo',
    bodyCheck: 'exact',
  },
  {
    name: 'GET /nowhere (404)',
    request: { method: 'GET', path: '/nowhere' },
    expectedStatus: 404,
    service: 'todo',
    bodyCheck: 'exact',
  },
  {
    name: 'POST /todos (201)',
    request: {
      method: 'POST',
      path: '/todos',
      body: '{"title":"Buy bread"}',
      contentType: JSON_TYPE,
    },
    expectedStatus: 201,
    service: 'todo',
    bodyCheck: 'digits-aside',
    durable: true,
    // The create, one transaction each: the id lock, then MAX(id) + 1.
    pgbenchScript: [
      'BEGIN;',
      'SELECT pg_advisory_xact_lock(7310002);',
      `INSERT INTO todos (id, title, done) SELECT COALESCE(MAX(id), 0) + 1, '"Buy bread"', false FROM todos RETURNING id;`,
      'COMMIT;',
    ].join('\n'),
  },
  {
    name: 'POST /withdraw/alice/1',
    request: { method: 'POST', path: '/withdraw/alice/1' },
    expectedStatus: 200,
    service: 'bank',
    bodyCheck: 'digits-aside',
    durable: true,
    // One hot row: every withdrawal takes from the same account.
    pgbenchScript:
      "UPDATE accounts SET balance = balance - 1 WHERE name = 'alice' AND balance >= 1 RETURNING balance;",
  },
  // Safe retries: a new Idempotency-Key on every request, each answer recorded with its write.
  {
    name: 'POST /todos (201), keyed',
    request: {
      method: 'POST',
      path: '/todos',
      body: '{"title":"Buy bread"}',
      contentType: JSON_TYPE,
      idempotencyKey: FRESH_KEY,
    },
    expectedStatus: 201,
    service: 'todo',
    bodyCheck: 'digits-aside',
  },
  {
    name: 'POST /withdraw/alice/1, keyed',
    request: { method: 'POST', path: '/withdraw/alice/1', idempotencyKey: FRESH_KEY },
    expectedStatus: 200,
    service: 'bank',
    bodyCheck: 'digits-aside',
  },
];

/** The concurrencies (connections) each scenario is measured at. */
export const CONCURRENCIES: readonly number[] = [1, 10, 50];
/** The PostgreSQL part's: the pool's batching shows under load. */
export const POSTGRES_CONNECTIONS = 50;
/** Large enough that a whole run of withdrawals of 1 never runs the account dry. */
export const BENCH_ACCOUNTS = 'alice=9000000000000000';

/** Targets of issue #32 that `npm run bench` checks (the instruction counts check the others). */
export const PEAK_RSS_MAX_BYTES = 150 * 1024 * 1024;
export const IDLE_CONNECTION_BYTES_MAX = 8 * 1024;
export const PGBENCH_RATIO_MIN = 4;
