// The shared limiter on a real PostgreSQL: instances (here two limiters on one database) decide
// together as one, on the database's clock, in batches; past rows are pruned; a database that
// cannot decide is the limiter's own fault (LimiterUnavailable), never a bug's.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { after, before, test } from 'node:test';
import pg from 'pg';
import {
  openPostgresRateLimiter,
  RATE_LIMITS_SERVICE,
  type PostgresRateLimiter,
} from '../../src/db/postgres/rate-limits.js';
import type { Decision } from '../../src/rate-limits/decision.js';
import { LimiterUnavailable } from '../../src/rate-limits/limiter.js';
import { createTestDatabase, postgresSkip, type TestDatabase } from '../support/postgres.js';
import { suiteUnless } from '../support/suite.js';

const skip = await postgresSkip();

/** A window (500 ms), a sweep period (250 ms) and a round's own time on a loaded machine. */
const WINDOW_SWEEP_AND_ROUND_MS = 500 + 250 + 750;

/** `count` distinct clients, one read each, 2,000 at a time; every one admitted. */
async function decideMany(
  limiter: PostgresRateLimiter,
  wave: string,
  count: number,
): Promise<void> {
  for (let first = 0; first < count; first += 2_000) {
    const decisions = await Promise.all(
      Array.from({ length: 2_000 }, (_, i) =>
        Promise.resolve(limiter.decide('reads', `${wave}-${first + i}`)),
      ),
    );
    assert.ok(decisions.every((decision) => decision.admitted));
  }
}

suiteUnless(skip, 'rate limits shared through PostgreSQL', () => {
  let database: TestDatabase;
  let admin: pg.Client;
  const opened: PostgresRateLimiter[] = [];
  const open = async (
    perSecond: number,
    burst: number,
    service = 'todo',
  ): Promise<PostgresRateLimiter> => {
    const limiter = await openPostgresRateLimiter({
      url: database.url,
      service,
      limits: { writes: { perSecond, burst }, reads: { perSecond, burst } },
    });
    opened.push(limiter);
    return limiter;
  };
  const rowsOf = async (service: string): Promise<number> =>
    Number(
      (
        await admin.query<{ n: string }>(
          'SELECT count(*) AS n FROM rate_limits WHERE key LIKE $1',
          [`${service}:%`],
        )
      ).rows[0]?.n,
    );
  /** The vacuums run by hand (the pruning's), not by autovacuum. */
  const vacuums = async (): Promise<number> =>
    Number(
      (
        await admin.query<{ n: number }>(
          "SELECT vacuum_count::float8 AS n FROM pg_stat_user_tables WHERE relname = 'rate_limits'",
        )
      ).rows[0]?.n ?? 0,
    );
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
    const [one, two] = [await open(1, 5), await open(1, 5)] as [
      PostgresRateLimiter,
      PostgresRateLimiter,
    ];
    const started = performance.now();
    const decisions = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        Promise.resolve((i % 2 === 0 ? one : two).decide('writes', '192.0.2.1')),
      ),
    );
    const spanMs = performance.now() - started;
    const admitted = decisions.filter((decision) => decision.admitted).length;
    assert.ok(admitted >= 5, `the whole burst: ${admitted}`);
    assert.ok(admitted <= Math.floor(5 + spanMs / 1000), `${admitted} admitted in ${spanMs} ms`);
  });

  test('requests of one client in one batch are decided in order: the burst first, then refusals with the wait', async () => {
    const limiter = await open(10, 3);
    const decisions: Decision[] = await Promise.all(
      Array.from({ length: 5 }, () => Promise.resolve(limiter.decide('reads', '192.0.2.2'))),
    );
    assert.deepEqual(
      decisions.map((decision) => [decision.admitted, decision.remaining]),
      [
        [true, 2],
        [true, 1],
        [true, 0],
        [false, 0],
        [false, 0],
      ],
    );
    const refused = decisions[3] as Decision;
    assert.ok(
      refused.retryAfterMs > 0 && refused.retryAfterMs <= 100,
      `wait ${refused.retryAfterMs} ms: one interval at most`,
    );
    assert.equal(
      refused.growsInMs,
      refused.retryAfterMs,
      'a refusal: one more is admitted when it may retry',
    );
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
    // A window of 2 s: the rows are there, none past, right after the decisions.
    const limiter = await open(1, 2, 'pruned');
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        Promise.resolve(limiter.decide('reads', `198.51.100.${i}`)),
      ),
    );
    const { rows: migrated } = await admin.query<{ version: number }>(
      'SELECT MAX(version) AS version FROM schema_migrations WHERE service = $1',
      [RATE_LIMITS_SERVICE],
    );
    assert.equal(migrated[0]?.version, 1);
    assert.equal(await rowsOf('pruned'), 20);
    await limiter.prune();
    assert.equal(await rowsOf('pruned'), 20, 'a row whose time is to come stays');
    await new Promise((resolve) => setTimeout(resolve, 1_050));
    await limiter.prune();
    assert.equal(await rowsOf('pruned'), 0, 'one request each: past one interval later');
  });

  test('the table holds at most the clients admitted within one window and a sweep period: 20,000 clients leave no row after it', async () => {
    // One every 500 ms, a burst of 1: the window is 500 ms, rounds every 250 ms (the least).
    const limiter = await open(2, 1, 'many');
    const startedMs = performance.now();
    await decideMany(limiter, 'a', 20_000);
    const decidedMs = performance.now();
    await new Promise((resolve) => setTimeout(resolve, WINDOW_SWEEP_AND_ROUND_MS));
    const left = await rowsOf('many');
    const tookMs = performance.now() - startedMs;
    assert.ok(
      tookMs < 9_000,
      `the check ran within ${tookMs.toFixed(0)} ms of opening (${(decidedMs - startedMs).toFixed(0)} ms deciding)`,
    );
    assert.equal(
      left,
      0,
      `${left} rows of 20,000 clients admitted nothing for more than a window and a sweep period`,
    );
  });

  test("the table's bytes stay bounded too: the space of pruned rows is reused by the next clients", async () => {
    // Every limiter prunes the whole table: those of the tests before, left open, would delete
    // some of each wave's rows, and this one's count of rows deleted would not reach a vacuum.
    await Promise.all(opened.splice(0).map((earlier) => earlier.close()));
    const limiter = await open(2, 1, 'churn');
    const heapBytes = async (): Promise<number> =>
      Number(
        (await admin.query<{ n: number }>("SELECT pg_relation_size('rate_limits')::float8 AS n"))
          .rows[0]?.n,
      );
    // The bytes with a wave's rows in the table, before they are pruned.
    const peaks: number[] = [];
    for (const wave of ['b', 'c', 'd']) {
      const vacuumsBefore = await vacuums();
      await decideMany(limiter, wave, 20_000);
      peaks.push(await heapBytes());
      await new Promise((resolve) => setTimeout(resolve, WINDOW_SWEEP_AND_ROUND_MS));
      assert.equal(await rowsOf('churn'), 0);
      // 20,000 rows deleted pass VACUUM_AFTER_ROWS: the round vacuums. The next wave starts once it
      // has (under load it may still be running when the rows are gone).
      const waitedFrom = performance.now();
      while ((await vacuums()) <= vacuumsBefore) {
        assert.ok(performance.now() - waitedFrom < 10_000, 'no vacuum after a wave was pruned');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    // Reused, not appended: up to VACUUM_AFTER_ROWS dead rows (half a wave) may wait for the next
    // vacuum, so a wave may find less room than the one before; without the vacuum each wave
    // appends a whole wave's pages (three waves: three times the first).
    assert.ok(
      (peaks[2] as number) <= (peaks[0] as number) * 1.75,
      `heap bytes with each wave of 20,000 new clients: ${peaks.join(', ')}`,
    );
  });

  test('steady churn is vacuumed too: rounds that each delete fewer rows than a vacuum waits for add up to one', async () => {
    // As above: only this limiter prunes, so that it counts every row deleted.
    await Promise.all(opened.splice(0).map((earlier) => earlier.close()));
    // An interval of 10 ms: a client's row is past 10 ms after its one request.
    const limiter = await open(100, 1, 'steady');
    const vacuumsBefore = await vacuums();
    // Six waves of 2,000 new clients, each pruned by the rounds before the next wave: no round
    // deletes more than 2,000 rows, and 12,000 (past VACUUM_AFTER_ROWS) are deleted in all.
    for (let wave = 0; wave < 6; wave++) {
      await decideMany(limiter, `w${wave}`, 2_000);
      while ((await rowsOf('steady')) > 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const waitedFrom = performance.now();
    while ((await vacuums()) <= vacuumsBefore) {
      assert.ok(
        performance.now() - waitedFrom < 5_000,
        'no vacuum after 12,000 rows were pruned in rounds of at most 2,000',
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });

  test("one batch of decisions at a time: while one waits for a row's lock, the next client's decision waits for it", async () => {
    // One request in ten seconds: no row of this test is past, so no pruning round touches it.
    const limiter = await open(0.1, 5, 'serial');
    await limiter.decide('reads', '192.0.2.20');
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    const settled: string[] = [];
    let first: Promise<unknown> = Promise.resolve();
    let second: Promise<unknown> = Promise.resolve();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM rate_limits WHERE key = $1 FOR UPDATE', [
        'serial:reads:192.0.2.20',
      ]);
      first = Promise.resolve(limiter.decide('reads', '192.0.2.20')).then(() =>
        settled.push('first'),
      );
      for (;;) {
        const { rows } = await admin.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
        );
        if ((rows[0]?.n ?? 0) > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      second = Promise.resolve(limiter.decide('reads', '192.0.2.21')).then(() =>
        settled.push('second'),
      );
      // The pool has connections free: a second batch sent now would be answered in milliseconds.
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.deepEqual(settled, [], 'nothing decided while the first batch waits');
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    await Promise.all([first, second]);
    assert.deepEqual(settled, ['first', 'second']);
  });

  test('a database that cannot be reached makes a decision fail as LimiterUnavailable', async () => {
    const nowhere = new URL(database.url);
    nowhere.port = '1';
    const limiter = await openPostgresRateLimiter({
      url: nowhere.toString(),
      service: 'todo',
      limits: { reads: { perSecond: 1, burst: 1 } },
    });
    try {
      await assert.rejects(
        Promise.resolve(limiter.decide('reads', '192.0.2.9')),
        LimiterUnavailable,
      );
    } finally {
      await limiter.close();
    }
  });
});
