// A PostgreSQL database opened by the stores' common layer (src/db/postgres/postgres.ts) while the database
// goes away and comes back, in this process: the in-process TCP proxy stands between the pool and
// the real server. What each operation and each readiness check answers, and what the log and the
// observer are told. (The same outages through whole services, killed and restarted, are in
// test/reliability.)
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  openPostgres,
  PING_TIMEOUT_MS,
  STATEMENT_TIMEOUT_MS,
  type PostgresDatabase,
  type PostgresOptions,
} from '../../src/db/postgres/postgres.js';
import { isStoreFault, type StoreFault } from '../../src/db/store-errors.js';
import { Deadline } from '../../src/common/deadline.js';
import type { Work } from '../../src/common/work.js';
import type { StoreObserver } from '../../src/db/store-observer.js';
import { createLogger } from '../../src/observe/log.js';
import {
  createTestDatabase,
  postgresSkip,
  refuseOneWrite,
  type TestDatabase,
} from '../support/postgres.js';
import { suiteUnless } from '../support/suite.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

/** The work of a request with a deadline (one that never passes here): a read that may be cancelled. */
const withDeadline = (): Work => ({ deadline: new Deadline(), origin: undefined });

const MIGRATIONS = [{ version: 1, sql: 'CREATE TABLE v (x INTEGER NOT NULL)' }];

interface Opened {
  readonly db: PostgresDatabase;
  readonly faults: StoreFault[];
  readonly outages: number[];
  readonly lines: string[];
  readonly waited: number[];
  readonly pool: () => { total: number; idle: number; waiting: number } | undefined;
}

suiteUnless(await postgresSkip(), 'PostgreSQL through an outage, in process', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  const opened: PostgresDatabase[] = [];

  before(async () => {
    database = await createTestDatabase();
    const url = new URL(database.url);
    proxy = await startTcpProxy(url.hostname, Number(url.port || 5432));
  });
  after(async () => {
    await Promise.all(opened.map((db) => db.close().catch(() => undefined)));
    await proxy.close();
    await database.drop();
  });

  /** Opens the test database through the proxy, watching what the store tells its log and observer. */
  async function open(options: Partial<PostgresOptions> = {}): Promise<Opened> {
    const url = new URL(database.url);
    url.host = `127.0.0.1:${proxy.port}`;
    const faults: StoreFault[] = [];
    const outages: number[] = [];
    const lines: string[] = [];
    const waited: number[] = [];
    let poolStats: (() => { total: number; idle: number; waiting: number }) | undefined;
    const observer: StoreObserver = {
      fault: (fault) => faults.push(fault),
      outage: () => outages.push(Date.now()),
      poolWaited: (ms) => waited.push(ms),
      watchPool: (stats) => (poolStats = stats),
    };
    const log = createLogger('info', (line) =>
      lines.push((JSON.parse(line) as { msg: string }).msg),
    );
    const db = await openPostgres({
      url: url.toString(),
      service: 'outage-test',
      migrations: MIGRATIONS,
      seed: () => Promise.resolve(),
      log,
      observer,
      ...options,
    });
    opened.push(db);
    return { db, faults, outages, lines, waited, pool: () => poolStats?.() };
  }

  test('a refused connection fails the operation as unavailable, once in the log and once as an outage; readiness says not ready until the database is back', async () => {
    const { db, faults, outages, lines } = await open();
    assert.equal(await db.ping(), true);
    proxy.cut('refuse');
    try {
      await assert.rejects(
        db.query('SELECT 1'),
        (error: unknown) =>
          isStoreFault(error, 'unavailable') &&
          /^the database is unavailable: /.test(error.message),
      );
      await assert.rejects(db.query('SELECT 1'), (error: unknown) =>
        isStoreFault(error, 'unavailable'),
      );
      assert.equal(await db.ping(), false);
      assert.deepEqual(
        [faults, outages.length],
        [['unavailable', 'unavailable', 'unavailable'], 1],
      );
    } finally {
      await proxy.restore();
    }
    assert.equal(await db.ping(), true, 'ready once the database answers');
    assert.deepEqual((await db.query<{ one: number }>('SELECT 1 AS one')).rows, [{ one: 1 }]);
    assert.equal(lines.filter((line) => /unavailable/i.test(line)).length, 1, lines.join(' | '));
  });

  test('while the database is unavailable, one operation at a time tries it; the others fail at once, saying so', async () => {
    const { db } = await open();
    proxy.cut('reset');
    try {
      await assert.rejects(db.query('SELECT 1'), (error: unknown) =>
        isStoreFault(error, 'unavailable'),
      );
      // The next one is the trial: it waits out the connect time-out; those behind it must not.
      const trial = db.query('SELECT 1').catch((error: unknown) => error);
      const startedMs = performance.now();
      const others = await Promise.allSettled([
        db.query('SELECT 1'),
        db.transaction(() => Promise.resolve(1)),
      ]);
      assert.ok(performance.now() - startedMs < 500, 'the others did not wait for a connection');
      for (const other of others) {
        assert.ok(other.status === 'rejected' && isStoreFault(other.reason, 'unavailable'));
        assert.equal(
          (other.reason as Error).message,
          'the database is unavailable; another request is trying it',
        );
      }
      assert.ok(isStoreFault(await trial, 'unavailable'));
    } finally {
      await proxy.restore();
    }
    await db.query('SELECT 1'); // the trial that finds the database back
    assert.equal(
      (await Promise.all([db.query('SELECT 1'), db.query('SELECT 1')])).length,
      2,
      'after a success, everyone goes through again',
    );
  });

  test('an operation that waited for its turn while the database went away fails at once, without trying it itself', async () => {
    const { db } = await open({ poolSize: 1 });
    await db.query('SELECT 1');
    const held = db.query('SELECT pg_sleep(1)').catch((error: unknown) => error);
    const waiting = db.query('SELECT 1').catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 100));
    proxy.cut('reset');
    try {
      assert.ok(isStoreFault(await held, 'unavailable'), 'the held operation met the outage');
      const error = await waiting;
      assert.ok(isStoreFault(error, 'unavailable'));
      assert.equal(error.message, 'the database became unavailable while this request waited');
    } finally {
      await proxy.restore();
    }
  });

  test('a readiness check gives up after its own time limit when the database stops answering mid-way', async () => {
    const { db } = await open();
    assert.equal(await db.ping(), true);
    proxy.cut('silent');
    try {
      const startedMs = performance.now();
      assert.equal(await db.ping(), false);
      const tookMs = performance.now() - startedMs;
      assert.ok(
        tookMs >= PING_TIMEOUT_MS - 100 && tookMs < PING_TIMEOUT_MS + 900,
        `the ping's own time limit, not the query's (${Math.round(tookMs)} ms)`,
      );
    } finally {
      await proxy.restore();
    }
  });

  test('a store that starts while the database is unreachable opens anyway, not ready, and migrates once the database is back', async () => {
    proxy.cut('refuse');
    let db: PostgresDatabase;
    try {
      ({ db } = await open());
      assert.equal(await db.ping(), false);
    } finally {
      await proxy.restore();
    }
    assert.equal(await db.ping(), true);
    await db.query('INSERT INTO v (x) VALUES (1)');
    assert.deepEqual((await db.query<{ x: number }>('SELECT x FROM v')).rows, [{ x: 1 }]);
  });

  test('after writes were refused (read-only), readiness probes with a write: ready again once one goes through', async () => {
    const { db, faults } = await open();
    assert.ok(isStoreFault(await refuseOneWrite(db), 'read-only'));
    assert.deepEqual(faults, ['read-only']);
    await db.query('SELECT 1');
    assert.equal(await db.ping(), true, 'the probe write went through: writes work');
    assert.deepEqual(
      (await db.query<{ n: string }>('SELECT count(*) AS n FROM v WHERE x = 2')).rows,
      [{ n: '0' }],
      'the refused write left nothing',
    );
  });

  test('with every pooled connection busy and operations queued, readiness answers as soon as any of them succeeds', async () => {
    const { db, waited, pool } = await open({ poolSize: 1 });
    await db.query('SELECT 1');
    const held = db.query('SELECT pg_sleep(0.3)');
    // Queued behind the held one, this one outlasts the ping's own time limit: the ping's own query
    // would come too late, so only the held operation's success can answer it in time.
    const queued = db.query('SELECT pg_sleep($1)', [PING_TIMEOUT_MS / 1000]);
    const startedMs = performance.now();
    assert.equal(await db.ping(), true);
    assert.ok(performance.now() - startedMs < PING_TIMEOUT_MS - 100, 'before its own time limit');
    await Promise.all([held, queued]);
    assert.ok(
      waited.length >= 1 && waited.every((ms) => ms >= 0 && ms < 2000),
      `the waits at the pool, in ms: ${waited.join(', ')}`,
    );
    assert.deepEqual(pool(), { total: 1, idle: 1, waiting: 0 });
  });

  test('a connection reset under a read that has a deadline fails that read as unavailable; no error escapes to end the process', async () => {
    const { db } = await open();
    await db.query('SELECT 1');
    // A read with a deadline runs on a connection checked out of the pool (it may be cancelled).
    const read = db
      .query('SELECT pg_sleep(1)', [], undefined, withDeadline())
      .catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(
      proxy.resetMidQuery(),
      1,
      'the read was on the wire when its connection was reset',
    );
    assert.ok(isStoreFault(await read, 'unavailable'));
    assert.deepEqual((await db.query<{ one: number }>('SELECT 1 AS one')).rows, [{ one: 1 }]);
  });

  test('a read with a deadline that the client gave up on does not leave its connection in the pool', async () => {
    const { db, pool } = await open();
    await db.query('SELECT 1', [], undefined, withDeadline());
    assert.equal(pool()?.total, 1);
    proxy.cut('silent');
    try {
      // The client's own time-out: the connection still owes that statement's answer.
      await assert.rejects(db.query('SELECT 1', [], undefined, withDeadline()), (error: unknown) =>
        isStoreFault(error, 'unavailable'),
      );
      assert.equal(pool()?.total, 0, 'closed, not pooled');
    } finally {
      await proxy.restore();
    }
  });

  test('a statement cut short by the statement time-out is busy, not unavailable: the store stays ready', async () => {
    const { db, faults } = await open();
    await assert.rejects(
      db.query('SELECT pg_sleep($1)', [(STATEMENT_TIMEOUT_MS + 500) / 1000]),
      (error: unknown) => isStoreFault(error, 'busy'),
    );
    assert.deepEqual(faults, ['busy']);
    assert.equal(await db.ping(), true);
  });
});
