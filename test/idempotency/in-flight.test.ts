// A key whose request is still running: 409 with Retry-After, on the instance running it and on
// any other; exactly one request of a key ever runs; and a key held by an instance that dies is
// free again for the retry (nothing about a key in flight outlives its process).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import type { RunningServer } from '../../src/server.js';
import { get, json, send, type RawResponse } from '../support/http.js';
import { assertBooksBalance } from '../support/journal.js';
import { createTestDatabase, postgresSkip, type TestDatabase } from '../support/postgres.js';
import { startTestServer } from '../support/server.js';
import { startServiceProcess } from '../support/service-process.js';
import { storeBackends, type FreshDatabase } from '../support/store-backends.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

const ACCOUNTS: ReadonlyMap<string, number> = new Map([['alice', 1000]]);
const DAY_MS = 24 * 60 * 60 * 1000;
const IN_FLIGHT = {
  code: 'IDEMPOTENCY_KEY_IN_FLIGHT',
  message: 'A request with this Idempotency-Key is still running; retry it later',
};

const withdraw = (url: string, path: string, key: string): Promise<RawResponse> =>
  send(url, { method: 'POST', path, headers: [['Idempotency-Key', key]] });
const balanceOf = async (url: string): Promise<number> =>
  (json(await get(url, '/accounts/alice')) as { balance: number }).balance;

function assertInFlight(answer: RawResponse, body: unknown): void {
  assert.equal(answer.status, 409, answer.text);
  assert.equal(answer.headers['retry-after'], '1');
  assert.deepEqual(json(answer), body);
}

for (const backend of await storeBackends()) {
  describe(
    `one key sent many times at once, on ${backend.name}`,
    { skip: backend.skip, timeout: SUITE_TIMEOUT_MS },
    () => {
      let fresh: FreshDatabase;
      let instances: RunningServer[] = [];
      before(async () => {
        fresh = await backend.fresh();
        const options = {
          service: 'bank' as const,
          db: fresh.db,
          accounts: ACCOUNTS,
          idempotency: { required: false, ttlMs: DAY_MS },
        };
        instances = [await startTestServer(options), await startTestServer(options)];
      });
      after(async () => {
        await Promise.all(instances.map((server) => server.close()));
        await fresh?.drop();
      });

      test('40 requests with one key over two instances: one runs, every other is 409 or its replay', async () => {
        const start = await balanceOf(instances[0]?.url as string);
        const answers = await Promise.all(
          Array.from({ length: 40 }, (_, i) =>
            withdraw(instances[i % 2]?.url as string, '/withdraw/alice/9', 'all-at-once'),
          ),
        );
        const ran = answers.filter(
          (a) => a.status === 200 && a.headers['idempotent-replayed'] === undefined,
        );
        assert.equal(ran.length, 1, 'exactly one ran');
        const body = ran[0]?.text;
        for (const answer of answers) {
          if (answer.status === 409) assertInFlight(answer, { detail: IN_FLIGHT });
          else assert.equal(answer.text, body);
        }
        assert.equal(await balanceOf(instances[1]?.url as string), start - 9);
        await assertBooksBalance(fresh.db, ACCOUNTS);
      });
    },
  );
}

const skip = await postgresSkip();

/**
 * Waits until a withdrawal waits for the row lock, as the database reports it. `client` must not be
 * in a transaction: pg_stat_activity is read once per transaction.
 */
async function untilWithdrawalWaits(client: pg.Client): Promise<void> {
  for (let polls = 0; polls < 500; polls++) {
    const { rows } = await client.query(
      "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%bank_withdraw_batch%'",
    );
    if (rows.length > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('no withdrawal ever waited for the row lock');
}

describe('a key in flight on PostgreSQL', { skip, timeout: SUITE_TIMEOUT_MS }, () => {
  let database: TestDatabase;
  let server: RunningServer;
  let unified: RunningServer;
  let holder: pg.Client;
  let watcher: pg.Client;
  before(async () => {
    database = await createTestDatabase();
    const idempotency = { required: false, ttlMs: DAY_MS };
    server = await startTestServer({
      service: 'bank',
      db: { kind: 'postgres', url: database.url },
      accounts: ACCOUNTS,
      idempotency,
    });
    unified = await startTestServer({
      service: 'bank',
      db: { kind: 'postgres', url: database.url },
      accounts: ACCOUNTS,
      errors: 'unified',
      idempotency,
    });
    holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    watcher = new pg.Client({ connectionString: database.url });
    await watcher.connect();
  });
  after(async () => {
    await holder?.end();
    await watcher?.end();
    await Promise.all([server?.close(), unified?.close()]);
    await assertBooksBalance({ kind: 'postgres', url: database.url }, ACCOUNTS);
    await database?.drop();
  });

  test('the same key on the same instance while the first still runs: 409 with Retry-After; the first then completes', async () => {
    const start = await balanceOf(server.url);
    await holder.query('BEGIN');
    await holder.query("SELECT balance FROM accounts WHERE name = 'alice' FOR UPDATE");
    const first = withdraw(server.url, '/withdraw/alice/5', 'same-instance');
    await untilWithdrawalWaits(watcher);
    assertInFlight(await withdraw(server.url, '/withdraw/alice/5', 'same-instance'), {
      detail: IN_FLIGHT,
    });
    await holder.query('ROLLBACK');
    const done = await first;
    assert.equal(done.status, 200);
    assert.equal(
      (await withdraw(server.url, '/withdraw/alice/5', 'same-instance')).headers[
        'idempotent-replayed'
      ],
      'true',
    );
    assert.equal(await balanceOf(server.url), start - 5);
  });

  test("the same key on another instance while the first still runs: 409 in that instance's format", async () => {
    await holder.query('BEGIN');
    await holder.query("SELECT balance FROM accounts WHERE name = 'alice' FOR UPDATE");
    const first = withdraw(server.url, '/withdraw/alice/6', 'other-instance');
    await untilWithdrawalWaits(watcher);
    assertInFlight(await withdraw(unified.url, '/withdraw/alice/6', 'other-instance'), {
      error: IN_FLIGHT,
    });
    await holder.query('ROLLBACK');
    assert.equal((await first).status, 200);
    const replay = await withdraw(unified.url, '/withdraw/alice/6', 'other-instance');
    assert.equal(replay.status, 200);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
  });

  test('a key held by an instance killed with -9 is free for the retry, which runs the withdrawal once', async () => {
    const doomed = await startServiceProcess([
      'bank',
      '--db',
      database.url,
      '--accounts',
      'alice=1000',
    ]);
    const start = await balanceOf(server.url);
    try {
      await holder.query('BEGIN');
      await holder.query("SELECT balance FROM accounts WHERE name = 'alice' FOR UPDATE");
      const lost = withdraw(doomed.urls[0] as string, '/withdraw/alice/11', 'killed-holder').then(
        () => 'answered',
        () => 'lost',
      );
      await untilWithdrawalWaits(watcher);
      await doomed.kill('SIGKILL');
      assert.equal(await lost, 'lost');
    } finally {
      await doomed.kill('SIGKILL');
      await holder.query('ROLLBACK');
    }
    // The dead instance's transaction ends when its server process finds the connection gone; until
    // then the retry may hear 409, which is exactly when a client retries.
    let answer: RawResponse;
    for (let attempt = 0; ; attempt++) {
      answer = await withdraw(server.url, '/withdraw/alice/11', 'killed-holder');
      if (answer.status !== 409 || attempt > 200) break;
      await new Promise((resolve) =>
        setTimeout(resolve, Number(answer.headers['retry-after']) * 50),
      );
    }
    assert.equal(answer.status, 200, answer.text);
    assert.equal(
      answer.headers['idempotent-replayed'],
      undefined,
      'nothing had committed: the retry ran',
    );
    assert.equal(await balanceOf(server.url), start - 11);
  });
});
