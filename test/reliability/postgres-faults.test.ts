// Real PostgreSQL failures, each answered for what it is: a backend terminated mid-statement and a
// statement timeout (503 with Retry-After), a read-only database (reads go on, writes 503, not
// ready until writes work again), and overload (a burst queues and succeeds; a pool too small for
// it is reported as saturation, never as an outage).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { openLedger } from '../../src/bank/service.js';
import { get, json, send, type RawResponse } from '../support/http.js';
import { createTestDatabase, postgresSkip, type TestDatabase } from '../support/postgres.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';

const skip = await postgresSkip();
const UNIFIED_503 = { error: { code: 'HTTP_503', message: 'Service Unavailable' } };
const DEFAULT_503 = { detail: 'Service Unavailable' };
const READY_BOUND_MS = 5_000;
/** The server's request time limit (src/server.ts): a queued request must be answered within it. */
const REQUEST_LIMIT_MS = 30_000;

function assertUnavailable(answer: RawResponse, body: unknown, what: string): void {
  assert.equal(answer.status, 503, `${what}: ${answer.text}`);
  assert.equal(answer.headers['retry-after'], '1', what);
  assert.deepEqual(json(answer), body, what);
}

const withdraw = (url: string, amount = 1): Promise<RawResponse> =>
  send(url, { method: 'POST', path: `/withdraw/alice/${amount}` });
const balance = async (url: string): Promise<number> =>
  (json(await get(url, '/accounts/alice')) as { balance: number }).balance;
const lines = (output: string, pattern: RegExp): number =>
  output.split('\n').filter((line) => pattern.test(line)).length;

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined); // a terminated session is expected in these tests
  await client.connect();
  return client;
}

/** Resolves once a session of the service waits for a lock in this database. */
async function untilWaitingForLock(admin: pg.Client, database: string): Promise<number> {
  for (;;) {
    const { rows } = await admin.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()",
      [database],
    );
    if (rows[0] !== undefined) return rows[0].pid;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function waitUntilReady(url: string): Promise<void> {
  const started = performance.now();
  while ((await get(url, '/readyz')).status !== 200) {
    if (performance.now() - started > READY_BOUND_MS)
      assert.fail(`not ready ${READY_BOUND_MS} ms after the fault ended`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('PostgreSQL fails mid-statement', { skip }, () => {
  let database: TestDatabase;
  let bank: ServiceProcess;
  let admin: pg.Client;
  let holder: pg.Client;
  const url = (): string => bank.urls[0] as string;
  const name = (): string => new URL(database.url).pathname.slice(1);

  before(async () => {
    database = await createTestDatabase();
    bank = await startServiceProcess([
      'bank',
      '--db',
      database.url,
      '--errors',
      'unified',
      '--accounts',
      'alice=1000',
    ]);
    admin = await connect(database.url);
  });
  after(async () => {
    await bank?.kill();
    await holder?.end().catch(() => undefined);
    await admin?.end();
    await database?.drop();
  });

  test('a backend terminated by pg_terminate_backend while it runs a withdrawal: 503 with Retry-After, nothing taken', async () => {
    assert.equal((await withdraw(url())).status, 200);
    holder = await connect(database.url);
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE accounts IN ACCESS EXCLUSIVE MODE');
    const pending = withdraw(url());
    const pid = await untilWaitingForLock(admin, name());
    await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    assertUnavailable(await pending, UNIFIED_503, 'the terminated withdrawal');
    await holder.query('ROLLBACK');
    await waitUntilReady(url());
    assert.equal(await balance(url()), 999);
    assert.equal((await withdraw(url())).status, 200);
    assert.equal(await balance(url()), 998);
  });

  test('a withdrawal that waits for a lock past statement_timeout: 503 with Retry-After, nothing taken', async () => {
    await holder.query('BEGIN');
    await holder.query("SELECT balance FROM accounts WHERE name = 'alice' FOR UPDATE");
    const answer = await withdraw(url());
    await holder.query('ROLLBACK');
    assertUnavailable(answer, UNIFIED_503, 'the timed-out withdrawal');
    assert.equal(await balance(url()), 998);
    await bank.logged('database busy: an operation waited too long for a lock');
    assert.doesNotMatch(bank.output(), /unhandled failure|"stack"/);
  });
});

describe('a read-only PostgreSQL database (default_transaction_read_only)', { skip }, () => {
  let database: TestDatabase;
  let bank: ServiceProcess;
  let admin: pg.Client;
  const url = (): string => bank.urls[0] as string;

  before(async () => {
    database = await createTestDatabase();
    const ledger = await openLedger(
      { kind: 'postgres', url: database.url },
      new Map([['alice', 100]]),
    );
    await ledger.close();
    admin = await connect(database.url);
    await admin.query(
      `ALTER DATABASE ${new URL(database.url).pathname.slice(1)} SET default_transaction_read_only = on`,
    );
    bank = await startServiceProcess(['bank', '--db', database.url]);
  });
  after(async () => {
    await bank?.kill();
    await admin?.end();
    await database?.drop();
  });

  test('reads work; writes answer 503 with Retry-After and one warning; not ready; ready and writing once writes are allowed', async () => {
    assert.equal(await balance(url()), 100);
    for (let i = 0; i < 10; i++)
      assertUnavailable(await withdraw(url()), DEFAULT_503, `withdrawal ${i}`);
    assertUnavailable(await get(url(), '/readyz'), DEFAULT_503, '/readyz');
    assert.equal(await balance(url()), 100);
    await bank.logged(
      'database refuses writes (read-only): writes answer 503 and not ready until one succeeds',
    );
    assert.equal(lines(bank.output(), /database refuses writes \(read-only\)/), 1, bank.output());
    assert.doesNotMatch(bank.output(), /unhandled failure|"stack"/);

    await admin.query(
      `ALTER DATABASE ${new URL(database.url).pathname.slice(1)} RESET default_transaction_read_only`,
    );
    await waitUntilReady(url());
    assert.equal((await withdraw(url())).status, 200);
    assert.equal(await balance(url()), 99);
    await bank.logged('database takes writes again');
  });
});

describe('overload on PostgreSQL is not an outage', { skip }, () => {
  let database: TestDatabase;
  const started: ServiceProcess[] = [];
  before(async () => {
    database = await createTestDatabase();
  });
  after(async () => {
    await Promise.all(started.map((service) => service.kill()));
    await database?.drop();
  });

  test('5,000 simultaneous withdrawals on one instance queue for the pool and succeed within the request limit', async (t) => {
    const bank = await startServiceProcess([
      'bank',
      '--db',
      database.url,
      '--accounts',
      'alice=1000000',
      '--errors',
      'unified',
    ]);
    started.push(bank);
    const url = bank.urls[0] as string;
    const began = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 5_000 }, async () => {
        const answer = await withdraw(url);
        return { answer, ms: performance.now() - began };
      }),
    );
    const ok = answers.filter(({ answer }) => answer.status === 200).length;
    for (const { answer, ms } of answers) {
      if (answer.status !== 200)
        assertUnavailable(answer, UNIFIED_503, 'a withdrawal of the burst');
      assert.ok(ms < REQUEST_LIMIT_MS, `answered after ${Math.round(ms)} ms`);
    }
    t.diagnostic(
      `${ok} of 5000 succeeded; the last answer came after ${Math.round(Math.max(...answers.map((a) => a.ms)))} ms`,
    );
    assert.ok(ok >= 4_750, `${ok} of 5000 succeeded`);
    assert.equal(await balance(url), 1_000_000 - ok);
    assert.doesNotMatch(bank.output(), /database unavailable/);
    assert.equal((await get(url, '/readyz')).status, 200);
  });

  test('a pool too small for the load answers 503 as saturation: one warning, never "unavailable", still ready', async () => {
    const bank = await startServiceProcess([
      'bank',
      '--db',
      database.url,
      '--db-pool-size',
      '1',
      '--db-pool-wait-ms',
      '100',
    ]);
    started.push(bank);
    const url = bank.urls[0] as string;
    const before = await balance(url);
    // The one pooled connection is held by a withdrawal that waits for a row lock taken here.
    const holder = await connect(database.url);
    try {
      await holder.query('BEGIN');
      await holder.query("SELECT balance FROM accounts WHERE name = 'alice' FOR UPDATE");
      const held = withdraw(url);
      await untilWaitingForLock(holder, new URL(database.url).pathname.slice(1));
      const reads = await Promise.all(
        Array.from({ length: 20 }, () => get(url, '/accounts/alice')),
      );
      for (const answer of reads)
        assertUnavailable(answer, DEFAULT_503, 'a read that found no free connection');
      await holder.query('ROLLBACK');
      assert.equal(
        (await held).status,
        200,
        'the withdrawal that held the connection went through',
      );
    } finally {
      await holder.end();
    }
    assert.equal(await balance(url), before - 1);
    assert.equal((await get(url, '/readyz')).status, 200);
    await bank.logged(
      'database connection pool saturated: requests waited too long for a connection (overload, not an outage)',
    );
    assert.equal(lines(bank.output(), /connection pool saturated/), 1, bank.output());
    assert.doesNotMatch(bank.output(), /database unavailable|unhandled failure/);
  });
});
