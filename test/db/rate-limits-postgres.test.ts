// The shared limiter on a real PostgreSQL: instances (here two limiters on one database) decide
// together as one, on the database's clock, in batches; past rows are pruned; a database that
// cannot decide is the limiter's own fault (LimiterUnavailable), never a bug's.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { openPostgresRateLimiter, RATE_LIMITS_SERVICE, type PostgresRateLimiter } from '../../src/db/rate-limits-postgres.js';
import type { Decision } from '../../src/rate-limits/decision.js';
import { LimiterUnavailable } from '../../src/rate-limits/limiter.js';
import { createTestDatabase, postgresSkip, type TestDatabase } from '../support/postgres.js';
import { suiteUnless } from '../support/suite.js';

const skip = await postgresSkip();

suiteUnless(skip, 'rate limits shared through PostgreSQL', () => {
  let database: TestDatabase;
  let admin: pg.Client;
  const opened: PostgresRateLimiter[] = [];
  const open = async (perSecond: number, burst: number, service = 'todo'): Promise<PostgresRateLimiter> => {
    const limiter = await openPostgresRateLimiter({ url: database.url, service, limits: { writes: { perSecond, burst }, reads: { perSecond, burst } } });
    opened.push(limiter);
    return limiter;
  };
  before(async () => {
    database = await createTestDatabase();
    admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
  });
  after(async () => {
    await Promise.all(opened.map((limiter) => limiter.close()));
    await admin.end();
    await database.drop();
  });

  test('two instances on one database admit together at most burst + rate × T, as one would', async () => {
    const [one, two] = [await open(1, 5), await open(1, 5)] as [PostgresRateLimiter, PostgresRateLimiter];
    const started = performance.now();
    const decisions = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? one : two).decide('writes', '192.0.2.1')));
    const spanMs = performance.now() - started;
    const admitted = decisions.filter((decision) => decision.admitted).length;
    assert.ok(admitted >= 5, `the whole burst: ${admitted}`);
    assert.ok(admitted <= Math.floor(5 + spanMs / 1000), `${admitted} admitted in ${spanMs} ms`);
  });

  test('requests of one client in one batch are decided in order: the burst first, then refusals with the wait', async () => {
    const limiter = await open(10, 3);
    const decisions: Decision[] = await Promise.all(Array.from({ length: 5 }, () => limiter.decide('reads', '192.0.2.2')));
    assert.deepEqual(decisions.map((decision) => [decision.admitted, decision.remaining]), [[true, 2], [true, 1], [true, 0], [false, 0], [false, 0]]);
    const refused = decisions[3] as Decision;
    assert.ok(refused.retryAfterMs > 0 && refused.retryAfterMs <= 100, `wait ${refused.retryAfterMs} ms: one interval at most`);
    assert.equal(refused.growsInMs, refused.retryAfterMs, 'a refusal: one more is admitted when it may retry');
  });

  test('clients, kinds and services are counted apart', async () => {
    const todo = await open(1, 1);
    const bank = await open(1, 1, 'bank');
    assert.equal((await todo.decide('writes', '192.0.2.3')).admitted, true);
    assert.equal((await todo.decide('writes', '192.0.2.3')).admitted, false);
    assert.equal((await todo.decide('reads', '192.0.2.3')).admitted, true, 'another kind');
    assert.equal((await todo.decide('writes', '192.0.2.4')).admitted, true, 'another client');
    assert.equal((await bank.decide('writes', '192.0.2.3')).admitted, true, 'another service');
  });

  test('the table is migrated on its own track, and rows whose time is past are pruned', async () => {
    const limiter = await open(1000, 1);
    await Promise.all(Array.from({ length: 20 }, (_, i) => limiter.decide('reads', `198.51.100.${i}`)));
    const { rows: migrated } = await admin.query('SELECT MAX(version) AS version FROM schema_migrations WHERE service = $1', [RATE_LIMITS_SERVICE]);
    assert.equal(migrated[0].version, 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const before = Number((await admin.query("SELECT count(*) AS n FROM rate_limits WHERE key LIKE 'todo:reads:198.51.100.%'")).rows[0].n);
    assert.equal(before, 20);
    let pruned = 0;
    for (let round = 0; round < 10 && pruned < 20; round++) pruned += await limiter.prune();
    const left = Number((await admin.query("SELECT count(*) AS n FROM rate_limits WHERE key LIKE 'todo:reads:198.51.100.%'")).rows[0].n);
    assert.equal(left, 0, `${pruned} pruned`);
  });

  test('a database that cannot be reached makes a decision fail as LimiterUnavailable', async () => {
    const nowhere = new URL(database.url);
    nowhere.port = '1';
    const limiter = await openPostgresRateLimiter({ url: nowhere.toString(), service: 'todo', limits: { reads: { perSecond: 1, burst: 1 } } });
    try {
      await assert.rejects(Promise.resolve(limiter.decide('reads', '192.0.2.9')), LimiterUnavailable);
    } finally {
      await limiter.close();
    }
  });
});
