// The PostgreSQL ledger, where withdrawals are group-committed by one statement per batch: the same
// answers as one transaction per withdrawal, each withdrawal with its own outcome, nothing
// acknowledged that is not committed, and a batch that is not committed fails whole.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { openPostgresLedger } from '../../src/bank/ledger-postgres.js';
import { StoreUnavailableError } from '../../src/db/store-errors.js';
import type { Ledger } from '../../src/bank/ledger.js';
import { createTestDatabase, postgresSkip, type TestDatabase } from '../support/postgres.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

const skip = await postgresSkip();

describe('group-commit PostgreSQL ledger', { skip, timeout: SUITE_TIMEOUT_MS }, () => {
  const databases: TestDatabase[] = [];
  after(() => Promise.all(databases.map((d) => d.drop())));
  async function freshLedger(accounts: Record<string, number>): Promise<{ ledger: Ledger; url: string }> {
    const database = await createTestDatabase();
    databases.push(database);
    return { ledger: await openPostgresLedger(database.url, new Map(Object.entries(accounts))), url: database.url };
  }
  async function sql(url: string, text: string): Promise<void> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end();
    }
  }

  let shared: Ledger;
  before(async () => {
    shared = (await freshLedger({ alice: 100 })).ledger;
  });
  after(() => shared?.close());

  test('200 concurrent withdrawals of 1 from 100: exactly 100 succeed, each sees its own balance, and the balance ends at 0', async () => {
    const outcomes = await Promise.all(Array.from({ length: 200 }, () => shared.withdraw('alice', 1)));
    const done = outcomes.filter((o) => o.kind === 'done');
    assert.deepEqual(
      done.map((o) => o.balance).sort((a, b) => a - b),
      Array.from({ length: 100 }, (_, i) => i),
    );
    for (const o of outcomes.filter((o) => o.kind !== 'done')) assert.deepEqual(o, { kind: 'insufficient', balance: 0 });
    assert.equal(await shared.balance('alice'), 0);
  });

  test('two ledgers on one database batching at once never overdraw and lose no withdrawal', async () => {
    const { ledger: first, url } = await freshLedger({ alice: 500, bob: 500 });
    const second = await openPostgresLedger(url, new Map());
    try {
      const ask = (ledger: Ledger, i: number) => ledger.withdraw(i % 3 === 0 ? 'bob' : 'alice', 1 + (i % 7));
      const outcomes = await Promise.all(Array.from({ length: 600 }, (_, i) => ask(i % 2 === 0 ? first : second, i)));
      const taken = { alice: 0, bob: 0 };
      outcomes.forEach((o, i) => {
        if (o.kind === 'done') taken[i % 3 === 0 ? 'bob' : 'alice'] += 1 + (i % 7);
      });
      assert.equal(await first.balance('alice'), 500 - taken.alice);
      assert.equal(await second.balance('bob'), 500 - taken.bob);
      assert.ok(outcomes.some((o) => o.kind === 'insufficient'), 'some withdrawals were refused');
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  test('close() while withdrawals are queued finishes them all, then refuses new ones', async () => {
    const { ledger, url } = await freshLedger({ alice: 1000 });
    const pending = Array.from({ length: 50 }, () => ledger.withdraw('alice', 1));
    const closed = ledger.close();
    assert.equal((await Promise.all(pending)).filter((o) => o.kind === 'done').length, 50);
    await closed;
    await assert.rejects(ledger.withdraw('alice', 1), /closed/);
    const reopened = await openPostgresLedger(url, new Map());
    try {
      assert.equal(await reopened.balance('alice'), 950);
    } finally {
      await reopened.close();
    }
  });

  test('a withdrawal that fails alone fails alone; the rest of its batch is committed', async () => {
    const { ledger, url } = await freshLedger({ alice: 100, bob: 100 });
    await sql(
      url,
      `CREATE FUNCTION refuse_bob() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN IF NEW.name = 'bob' THEN RAISE EXCEPTION 'bob is frozen'; END IF; RETURN NEW; END $$;
       CREATE TRIGGER refuse_bob BEFORE UPDATE ON accounts FOR EACH ROW EXECUTE FUNCTION refuse_bob();`,
    );
    try {
      const [first, frozen, second] = await Promise.allSettled([ledger.withdraw('alice', 1), ledger.withdraw('bob', 1), ledger.withdraw('alice', 2)]);
      assert.deepEqual(first, { status: 'fulfilled', value: { kind: 'done', balance: 99 } });
      assert.equal(frozen?.status, 'rejected');
      assert.match(String((frozen as PromiseRejectedResult).reason), /bob is frozen/);
      assert.deepEqual(second, { status: 'fulfilled', value: { kind: 'done', balance: 97 } });
      assert.equal(await ledger.balance('bob'), 100);
    } finally {
      await ledger.close();
    }
  });

  test('a batch that is not committed fails every withdrawal in it as unavailable (a 503), and none of them is applied', async () => {
    const { ledger, url } = await freshLedger({ alice: 100, bob: 100 });
    // A withdrawal from bob ends the connection mid-transaction: PostgreSQL rolls the batch back.
    await sql(
      url,
      `CREATE FUNCTION drop_on_bob() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN IF NEW.name = 'bob' THEN PERFORM pg_terminate_backend(pg_backend_pid()); END IF; RETURN NEW; END $$;
       CREATE TRIGGER drop_on_bob BEFORE UPDATE ON accounts FOR EACH ROW EXECUTE FUNCTION drop_on_bob();`,
    );
    try {
      const results = await Promise.allSettled([ledger.withdraw('alice', 1), ledger.withdraw('bob', 1), ledger.withdraw('alice', 2)]);
      for (const result of results) {
        assert.equal(result.status, 'rejected');
        assert.ok((result as PromiseRejectedResult).reason instanceof StoreUnavailableError);
      }
      assert.equal(await ledger.balance('alice'), 100);
      assert.equal(await ledger.balance('bob'), 100);
      // The ledger itself is fine: once the cause is gone, withdrawals work again.
      await sql(url, 'DROP TRIGGER drop_on_bob ON accounts');
      assert.deepEqual(await ledger.withdraw('bob', 1), { kind: 'done', balance: 99 });
      assert.equal(await ledger.ping(), true);
    } finally {
      await ledger.close();
    }
  });
});
