// What is measured: each scenario is one request, sent over and over, with the status every answer
// must have, the service that answers it and the baseline it is compared with, and its target.
import { FRESH_KEY, type BenchRequest } from './load.js';

/** The servers of the SQLite part; the PostgreSQL part maps todo, bank and bank-unified to its own. */
export type ServiceRole = 'todo' | 'todo-no-access-log' | 'bank' | 'bank-unified' | 'bank-problem';
export type BaselineRole = 'baseline' | 'baseline-unified' | 'baseline-problem';

export interface Scenario {
  readonly name: string;
  readonly request: BenchRequest;
  readonly expectedStatus: number;
  readonly service: ServiceRole;
  readonly baseline: BaselineRole;
  /** Ids and balances differ between servers, so such bodies are compared with their digits aside. */
  readonly bodyCheck: 'exact' | 'digits-aside';
  /** Least req/s as a fraction of the baseline's (median of per-round ratios), where there is a target. */
  readonly baselineRatioMin?: number;
  /** Durable writes: least req/s as a fraction of the same service with synchronous=OFF. */
  readonly syncOffRatioMin?: number;
  /** Measured in the SQLite part only: what it shows does not depend on the database. */
  readonly sqliteOnly?: boolean;
  /** PostgreSQL part: the statements of one such request, which pgbench runs one per transaction for the ceiling. */
  readonly pgbenchScript?: string;
  /** PostgreSQL part: least req/s of one instance as a multiple of that ceiling. */
  readonly ceilingRatioMin?: number;
  /** PostgreSQL part: least req/s of one instance as a fraction of the baseline's. */
  readonly postgresBaselineRatioMin?: number;
  /**
   * Least req/s of the service as a fraction of its req/s in another scenario of the same run, each
   * taken over the baseline of its own rounds (so that a machine slowing down between the two
   * scenarios does not count).
   */
  readonly relativeTo?: { readonly scenario: string; readonly ratioMin: number };
  /**
   * SQLite part, default error format: also measure the baseline writing its answers at the end of
   * the turn, as our services do, to show what that technique accounts for (no target).
   */
  readonly turnEndBaseline?: boolean;
}

const JSON_TYPE = 'application/json';

export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'GET /todos/1',
    request: { method: 'GET', path: '/todos/1' },
    expectedStatus: 200,
    service: 'todo',
    baseline: 'baseline',
    bodyCheck: 'exact',
    // As shipped: access log on, metrics on.
    baselineRatioMin: 0.8,
    turnEndBaseline: true,
    pgbenchScript: 'SELECT title, done FROM todos WHERE id = 1;',
    postgresBaselineRatioMin: 0.5,
  },
  {
    name: 'GET /todos/1, --access-log off',
    request: { method: 'GET', path: '/todos/1' },
    expectedStatus: 200,
    service: 'todo-no-access-log',
    baseline: 'baseline',
    bodyCheck: 'exact',
    baselineRatioMin: 0.85,
    turnEndBaseline: true,
    sqliteOnly: true,
  },
  {
    name: 'POST /todos',
    request: { method: 'POST', path: '/todos', body: '{"title":"Buy bread"}', contentType: JSON_TYPE },
    expectedStatus: 201,
    service: 'todo',
    baseline: 'baseline',
    bodyCheck: 'digits-aside',
    // The create one transaction each: the id lock, then MAX(id) + 1, as before group commit.
    pgbenchScript: [
      'BEGIN;',
      'SELECT pg_advisory_xact_lock(7310002);',
      `INSERT INTO todos (id, title, done) SELECT COALESCE(MAX(id), 0) + 1, '"Buy bread"', false FROM todos RETURNING id;`,
      'COMMIT;',
    ].join('\n'),
    ceilingRatioMin: 4,
  },
  {
    name: 'POST /todos, no title',
    request: { method: 'POST', path: '/todos', body: '{"done":true}', contentType: JSON_TYPE },
    expectedStatus: 422,
    service: 'todo',
    baseline: 'baseline',
    bodyCheck: 'exact',
    baselineRatioMin: 0.8,
    turnEndBaseline: true,
  },
  {
    name: 'GET /nowhere',
    request: { method: 'GET', path: '/nowhere' },
    expectedStatus: 404,
    service: 'todo',
    baseline: 'baseline',
    bodyCheck: 'exact',
    baselineRatioMin: 0.8,
    turnEndBaseline: true,
  },
  {
    name: 'POST /withdraw/alice/1',
    request: { method: 'POST', path: '/withdraw/alice/1' },
    expectedStatus: 200,
    service: 'bank',
    baseline: 'baseline',
    bodyCheck: 'digits-aside',
    syncOffRatioMin: 0.8,
    pgbenchScript: "UPDATE accounts SET balance = balance - 1 WHERE name = 'alice' AND balance >= 1 RETURNING balance;",
    ceilingRatioMin: 4,
  },
  // Safe retries: a durable withdrawal with a new Idempotency-Key each time (its answer recorded in
  // the same savepoint), and the replay of a recorded one, against the cheapest read of the bank.
  {
    name: 'GET /accounts/alice',
    request: { method: 'GET', path: '/accounts/alice' },
    expectedStatus: 200,
    service: 'bank',
    baseline: 'baseline',
    bodyCheck: 'digits-aside',
    sqliteOnly: true,
  },
  {
    name: 'POST /withdraw/alice/1, keyed',
    request: { method: 'POST', path: '/withdraw/alice/1', idempotencyKey: FRESH_KEY },
    expectedStatus: 200,
    service: 'bank',
    baseline: 'baseline',
    bodyCheck: 'digits-aside',
    relativeTo: { scenario: 'POST /withdraw/alice/1', ratioMin: 0.85 },
    sqliteOnly: true,
  },
  {
    name: 'POST /withdraw/alice/1, replayed',
    request: { method: 'POST', path: '/withdraw/alice/1', idempotencyKey: '"bench-replayed"' },
    expectedStatus: 200,
    service: 'bank',
    baseline: 'baseline',
    bodyCheck: 'digits-aside',
    relativeTo: { scenario: 'GET /accounts/alice', ratioMin: 0.8 },
    sqliteOnly: true,
  },
  {
    name: 'POST /withdraw/alice/x, unified',
    request: { method: 'POST', path: '/withdraw/alice/x' },
    expectedStatus: 422,
    service: 'bank-unified',
    baseline: 'baseline-unified',
    bodyCheck: 'exact',
    baselineRatioMin: 0.8,
  },
  {
    name: 'GET /nowhere, unified',
    request: { method: 'GET', path: '/nowhere' },
    expectedStatus: 404,
    service: 'bank-unified',
    baseline: 'baseline-unified',
    bodyCheck: 'exact',
    baselineRatioMin: 0.8,
  },
  // Problem details render from the same precomputed frames as the other formats: measured where it
  // does not depend on the database.
  {
    name: 'POST /withdraw/alice/x, problem',
    request: { method: 'POST', path: '/withdraw/alice/x' },
    expectedStatus: 422,
    service: 'bank-problem',
    baseline: 'baseline-problem',
    bodyCheck: 'exact',
    baselineRatioMin: 0.8,
    sqliteOnly: true,
  },
  {
    name: 'GET /nowhere, problem',
    request: { method: 'GET', path: '/nowhere' },
    expectedStatus: 404,
    service: 'bank-problem',
    baseline: 'baseline-problem',
    bodyCheck: 'exact',
    baselineRatioMin: 0.8,
    sqliteOnly: true,
  },
  {
    name: 'GET /openapi.json',
    request: { method: 'GET', path: '/openapi.json' },
    expectedStatus: 200,
    service: 'todo',
    baseline: 'baseline',
    bodyCheck: 'exact',
  },
];

/** Targets that hold for every service row of the SQLite part. */
export const LATENCY_P99_MAX_MS = 10;
/** The same for every service row of the PostgreSQL part, where each commit waits for the server's fsync. */
export const POSTGRES_LATENCY_P99_MAX_MS = 50;
export const PEAK_RSS_MAX_BYTES = 150 * 1024 * 1024;
export const CONNECTIONS = 50;
/** Large enough that a whole run of withdrawals of 1 never runs the account dry. */
export const BENCH_ACCOUNTS = 'alice=9000000000000000';
