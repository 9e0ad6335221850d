// The connections a PostgreSQL store opens (src/db/postgres/postgres.ts), against the real server: what each
// connection tells the server, what the store does when the server refuses writes at start, which
// statements count as writes for readiness, and connections the server ends under the store (while
// pooled and idle, or inside a transaction), which must fail as unavailable without ending the
// process.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import {
  openPostgres,
  type PostgresDatabase,
  type PostgresOptions,
} from '../../src/db/postgres/postgres.js';
import { isStoreFault, type StoreFault } from '../../src/db/store-errors.js';
import { createLogger } from '../../src/observe/log.js';
import {
  createTestDatabase,
  databaseNameOf,
  postgresSkip,
  refuseOneWrite,
  setReadOnly,
  TEST_DATABASE_URL,
  untilRefusedAsReadOnly,
  untilTrue,
  withTestDatabase,
  type TestDatabase,
} from '../support/postgres.js';
import { suiteUnless } from '../support/suite.js';
import { UNBOUNDED_WORK } from '../../src/common/work.js';

const MIGRATIONS = [{ version: 1, sql: 'CREATE TABLE v (x INTEGER NOT NULL)' }];
/** How long the server's end of a connection may take to reach the pool. */
const REPORT_WAIT_MS = 5_000;

interface Opened {
  readonly db: PostgresDatabase;
  readonly faults: StoreFault[];
  readonly outages: number[];
  readonly lines: string[];
}

/** Runs `sql` as the administrator on the server's default database. */
async function admin<R extends pg.QueryResultRow>(
  sql: string,
  values: unknown[] = [],
): Promise<R[]> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    return (await client.query<R>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

async function until(done: () => boolean, what: string): Promise<void> {
  const deadline = performance.now() + REPORT_WAIT_MS;
  while (!done()) {
    if (performance.now() > deadline) assert.fail(`${what} within ${REPORT_WAIT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

suiteUnless(await postgresSkip(), 'the connections of a PostgreSQL store', () => {
  let database: TestDatabase;
  const opened: PostgresDatabase[] = [];

  before(async () => {
    database = await createTestDatabase();
  });
  after(async () => {
    await Promise.all(opened.map((db) => db.close().catch(() => undefined)));
    await database.drop();
  });

  async function open(options: Partial<PostgresOptions> = {}, url = database.url): Promise<Opened> {
    const faults: StoreFault[] = [];
    const outages: number[] = [];
    const lines: string[] = [];
    const log = createLogger('info', (line) =>
      lines.push((JSON.parse(line) as { msg: string }).msg),
    );
    const observer = {
      fault: (fault: StoreFault) => faults.push(fault),
      outage: () => outages.push(Date.now()),
    };
    const db = await openPostgres({
      url,
      service: 'sessions-test',
      migrations: MIGRATIONS,
      seed: () => Promise.resolve(),
      log,
      observer,
      ...options,
    });
    opened.push(db);
    return { db, faults, outages, lines };
  }

  test('each connection names its service to the server, and commits synchronously whatever the database says', async () => {
    await withTestDatabase(async (own) => {
      await admin(`ALTER DATABASE ${databaseNameOf(own)} SET synchronous_commit = off`);
      const { db } = await open({}, own.url);
      assert.deepEqual(
        (await db.query<{ name: string }>("SELECT current_setting('application_name') AS name"))
          .rows,
        [{ name: 'status-services sessions-test' }],
      );
      assert.deepEqual(
        (await db.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows,
        [{ synchronous_commit: 'on' }],
      );
      await db.close();
    });
  });

  test('a database that refuses writes at start keeps the store from opening, saying why', async () => {
    await withTestDatabase(async (own) => {
      await setReadOnly(own, true);
      await assert.rejects(
        open({}, own.url),
        (error: unknown) => isStoreFault(error, 'read-only') && /read-only/.test(error.message),
      );
    });
  });

  test('after writes were refused, statements that only read leave the store waiting for a write; a write ends the wait', async () => {
    const { db, faults, lines } = await open();
    assert.ok(isStoreFault(await refuseOneWrite(db), 'read-only'));
    assert.deepEqual(faults, ['read-only']);
    await db.query('SELECT 1');
    await db.query('  select 1');
    await db.prepared('sessions-read', '\n\tSelect 1')([], UNBOUNDED_WORK);
    assert.deepEqual(
      lines.filter((line) => line === 'database takes writes again'),
      [],
      'reads say nothing of writes',
    );
    // A write that holds SELECT further on is a write all the same.
    await db.query('INSERT INTO v (x) SELECT 1 WHERE false');
    assert.deepEqual(
      lines.filter((line) => line === 'database takes writes again'),
      ['database takes writes again'],
    );
  });

  test('after writes were refused, a committed transaction ends the wait for a write as well', async () => {
    const { db, lines } = await open();
    assert.ok(isStoreFault(await refuseOneWrite(db), 'read-only'));
    assert.equal(
      await db.transaction(
        async (session) => (await session.query('INSERT INTO v (x) SELECT 1 WHERE false')).rowCount,
      ),
      0,
    );
    assert.deepEqual(
      lines.filter((line) => line === 'database takes writes again'),
      ['database takes writes again'],
    );
  });

  test('while writes are known to fail, readiness waits for its own write: a read that succeeds meanwhile does not answer it', async () => {
    const { db } = await open({ poolSize: 1 });
    assert.ok(isStoreFault(await refuseOneWrite(db), 'read-only'));
    // The one connection is busy with a read, which ends while the ping's write waits for it.
    const read = db.query('SELECT pg_sleep(0.05)');
    const ready = db.ping();
    await read;
    assert.equal(await ready, true, 'writes work again, and the ping learnt it from its own write');
  });

  test('while the server refuses writes, readiness stays false: its probe is a real write, not an empty transaction', async () => {
    await withTestDatabase(async (own) => {
      const { db } = await open({}, own.url);
      await setReadOnly(own, true);
      assert.ok(
        isStoreFault(
          await untilRefusedAsReadOnly(() => db.query('INSERT INTO v (x) VALUES (1)')),
          'read-only',
        ),
      );
      assert.equal(await db.ping(), false);
      await setReadOnly(own, false);
      assert.equal(await untilTrue(() => db.ping()), true, 'ready again once writes work');
      await db.close();
    });
  });

  test('a database found corrupt while migrating at start keeps the store from opening', async () => {
    await withTestDatabase(async (own) => {
      const corrupt = [
        {
          version: 1,
          sql: "DO $$ BEGIN RAISE EXCEPTION 'invalid page in block 7' USING ERRCODE = 'XX001'; END $$",
        },
      ];
      await assert.rejects(open({ migrations: corrupt }, own.url), (error: unknown) =>
        isStoreFault(error, 'corrupt'),
      );
    });
  });

  test('a pooled connection the server ends while idle is reported as an outage, and the next operation opens a new one', async () => {
    await withTestDatabase(async (own) => {
      const { db, faults, outages } = await open({}, own.url);
      await db.query('SELECT 1'); // one connection, idle in the pool now
      const ended = await admin<{ pid: number }>(
        'SELECT pg_terminate_backend(pid) AS pid FROM pg_stat_activity WHERE datname = $1 AND application_name = $2',
        [databaseNameOf(own), 'status-services sessions-test'],
      );
      assert.equal(ended.length, 1, 'the pooled connection, found by its name');
      await until(() => faults.length > 0, 'the pool reports the ended connection');
      assert.deepEqual([faults, outages.length], [['unavailable'], 1]);
      assert.deepEqual((await db.query<{ one: number }>('SELECT 1 AS one')).rows, [{ one: 1 }]);
      assert.equal(await db.ping(), true);
      await db.close();
    });
  });

  test('a connection the server ends inside a transaction fails that transaction as unavailable, and the process goes on', async () => {
    const { db } = await open();
    await assert.rejects(
      db.transaction(async (session) => {
        const [own] = (await session.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;
        await admin('SELECT pg_terminate_backend($1)', [own?.pid]);
        // The server's goodbye reaches the idle connection as an 'error' event before the next
        // statement.
        await new Promise((resolve) => setTimeout(resolve, 200));
        await session.query('INSERT INTO v (x) VALUES (2)');
      }),
      (error: unknown) => isStoreFault(error, 'unavailable'),
    );
    assert.deepEqual(
      (await db.query<{ n: string }>('SELECT count(*) AS n FROM v WHERE x = 2')).rows,
      [{ n: '0' }],
    );
  });

  test('transactions, committed or failed, leave no listener behind on their connection', async () => {
    const { db } = await open({ poolSize: 1 });
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      for (let k = 0; k < 15; k++) await db.transaction((session) => session.query('SELECT 1'));
      for (let k = 0; k < 15; k++) {
        await assert.rejects(
          db.transaction(() => Promise.reject(new RangeError('work failed'))),
          RangeError,
        );
      }
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    assert.deepEqual(warnings, [], 'no MaxListenersExceededWarning');
  });
});
