// The PostgreSQL ledger, where withdrawals are group-committed by one statement per batch: the same
// answers as one transaction per withdrawal, each withdrawal with its own outcome, nothing
// acknowledged that is not committed, and a batch that is not committed fails whole.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { openPostgresLedger } from '../../src/bank/ledger-postgres.js';
import { isStoreFault } from '../../src/db/store-errors.js';
import type { Ledger, WithdrawOutcome } from '../../src/bank/ledger.js';
import type { KeyedWrite } from '../../src/common/keyed-writes.js';
import {
  createTestDatabase,
  postgresSkip,
  untilWaitingForLock,
  type TestDatabase,
} from '../support/postgres.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';
import { UNBOUNDED_WORK } from '../../src/common/work.js';
import { ran } from '../support/keys.js';

const skip = await postgresSkip();

describe('group-commit PostgreSQL ledger', { skip, timeout: SUITE_TIMEOUT_MS }, () => {
  const databases: TestDatabase[] = [];
  after(() => Promise.all(databases.map((d) => d.drop())));
  /** `batches` collects the number of writes of every batch committed. */
  async function freshLedger(
    accounts: Record<string, number>,
    batches: number[] = [],
  ): Promise<{ ledger: Ledger; url: string }> {
    const database = await createTestDatabase();
    databases.push(database);
    const observer = { batchCommitted: (writes: number) => void batches.push(writes) };
    return {
      ledger: await openPostgresLedger(database.url, new Map(Object.entries(accounts)), {
        observer,
      }),
      url: database.url,
    };
  }
  /** From now on a change to bob's balance raises an error: a withdrawal that fails alone. */
  const freezeBob = (url: string): Promise<void> =>
    sql(
      url,
      `CREATE FUNCTION refuse_bob() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN IF NEW.name = 'bob' THEN RAISE EXCEPTION 'bob is frozen'; END IF; RETURN NEW; END $$;
       CREATE TRIGGER refuse_bob BEFORE UPDATE ON accounts FOR EACH ROW EXECUTE FUNCTION refuse_bob();`,
    );
  const keyed = (key: string, fingerprint = `POST /withdraw/${key}`): KeyedWrite => {
    const nowMs = Date.now();
    return { key, fingerprint, nowMs, expiredBeforeMs: nowMs - 60_000 };
  };
  async function rows(url: string, text: string): Promise<Record<string, unknown>[]> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query(text)).rows as Record<string, unknown>[];
    } finally {
      await client.end();
    }
  }
  const sql = async (url: string, text: string): Promise<void> => void (await rows(url, text));

  let shared: Ledger;
  before(async () => {
    shared = (await freshLedger({ alice: 100 })).ledger;
  });
  after(() => shared?.close());

  test('200 concurrent withdrawals of 1 from 100: exactly 100 succeed, each sees its own balance, and the balance ends at 0', async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 200 }, () =>
        ran(shared.withdraw('alice', 1, undefined, UNBOUNDED_WORK)),
      ),
    );
    const done = outcomes.filter((o) => o.kind === 'done');
    assert.deepEqual(
      done.map((o) => o.balance).sort((a, b) => a - b),
      Array.from({ length: 100 }, (_, i) => i),
    );
    for (const o of outcomes.filter((o) => o.kind !== 'done'))
      assert.deepEqual(o, { kind: 'insufficient', balance: 0 });
    assert.equal(await shared.balance('alice', UNBOUNDED_WORK), 0);
  });

  test('two ledgers on one database batching at once never overdraw and lose no withdrawal', async () => {
    const { ledger: first, url } = await freshLedger({ alice: 500, bob: 500 });
    const second = await openPostgresLedger(url, new Map());
    try {
      const ask = (ledger: Ledger, i: number) =>
        ran(ledger.withdraw(i % 3 === 0 ? 'bob' : 'alice', 1 + (i % 7), undefined, UNBOUNDED_WORK));
      const outcomes = await Promise.all(
        Array.from({ length: 600 }, (_, i) => ask(i % 2 === 0 ? first : second, i)),
      );
      const taken = { alice: 0, bob: 0 };
      outcomes.forEach((o, i) => {
        if (o.kind === 'done') taken[i % 3 === 0 ? 'bob' : 'alice'] += 1 + (i % 7);
      });
      assert.equal(await first.balance('alice', UNBOUNDED_WORK), 500 - taken.alice);
      assert.equal(await second.balance('bob', UNBOUNDED_WORK), 500 - taken.bob);
      assert.ok(
        outcomes.some((o) => o.kind === 'insufficient'),
        'some withdrawals were refused',
      );
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  test('close() while withdrawals are queued finishes them all, then refuses new ones', async () => {
    const { ledger, url } = await freshLedger({ alice: 1000 });
    const pending = Array.from({ length: 50 }, () =>
      ran(ledger.withdraw('alice', 1, undefined, UNBOUNDED_WORK)),
    );
    const closed = ledger.close();
    assert.equal((await Promise.all(pending)).filter((o) => o.kind === 'done').length, 50);
    await closed;
    await assert.rejects(ran(ledger.withdraw('alice', 1, undefined, UNBOUNDED_WORK)), /closed/);
    const reopened = await openPostgresLedger(url, new Map());
    try {
      assert.equal(await reopened.balance('alice', UNBOUNDED_WORK), 950);
    } finally {
      await reopened.close();
    }
  });

  test('a withdrawal that fails alone fails alone; the rest of its batch is committed', async () => {
    const { ledger, url } = await freshLedger({ alice: 100, bob: 100 });
    await freezeBob(url);
    try {
      const [first, frozen, second] = await Promise.allSettled([
        ran(ledger.withdraw('alice', 1, undefined, UNBOUNDED_WORK)),
        ran(ledger.withdraw('bob', 1, undefined, UNBOUNDED_WORK)),
        ran(ledger.withdraw('alice', 2, undefined, UNBOUNDED_WORK)),
      ]);
      assert.deepEqual(first, { status: 'fulfilled', value: { kind: 'done', balance: 99 } });
      assert.equal(frozen?.status, 'rejected');
      assert.match(String(frozen.reason), /bob is frozen/);
      assert.deepEqual(second, { status: 'fulfilled', value: { kind: 'done', balance: 97 } });
      assert.equal(await ledger.balance('bob', UNBOUNDED_WORK), 100);
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
      const results = await Promise.allSettled([
        ran(ledger.withdraw('alice', 1, undefined, UNBOUNDED_WORK)),
        ran(ledger.withdraw('bob', 1, undefined, UNBOUNDED_WORK)),
        ran(ledger.withdraw('alice', 2, undefined, UNBOUNDED_WORK)),
      ]);
      for (const result of results) {
        assert.equal(result.status, 'rejected');
        assert.ok(isStoreFault(result.reason, 'unavailable'));
      }
      assert.equal(await ledger.balance('alice', UNBOUNDED_WORK), 100);
      assert.equal(await ledger.balance('bob', UNBOUNDED_WORK), 100);
      // The ledger itself is fine: once the cause is gone, withdrawals work again.
      await sql(url, 'DROP TRIGGER drop_on_bob ON accounts');
      assert.deepEqual(await ran(ledger.withdraw('bob', 1, undefined, UNBOUNDED_WORK)), {
        kind: 'done',
        balance: 99,
      });
      assert.equal(await ledger.ping(), true);
    } finally {
      await ledger.close();
    }
  });

  test('keyed withdrawals share the group-commit batch with unkeyed ones: fewer commits than writes, each keyed answer recorded and journaled with its key', async () => {
    const batches: number[] = [];
    const { ledger, url } = await freshLedger({ alice: 1000 }, batches);
    try {
      const outcomes = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          i % 2 === 0
            ? ledger.withdraw('alice', 1, keyed(`k${i}`), UNBOUNDED_WORK)
            : ran(ledger.withdraw('alice', 1, undefined, UNBOUNDED_WORK)),
        ),
      );
      assert.ok(
        outcomes.every((o) => o.kind === 'ran' || o.kind === 'done'),
        JSON.stringify(outcomes),
      );
      assert.equal(
        batches.reduce((a, b) => a + b, 0),
        60,
        'every write was committed in a batch',
      );
      assert.ok(batches.length < 60 && Math.max(...batches) > 1, `batches: ${batches.join(', ')}`);
      assert.equal(await ledger.balance('alice', UNBOUNDED_WORK), 940);
      const journal = await rows(
        url,
        'SELECT idempotency_key FROM withdrawals WHERE idempotency_key IS NOT NULL ORDER BY idempotency_key',
      );
      assert.deepEqual(
        journal.map((r) => r['idempotency_key']),
        Array.from({ length: 30 }, (_, i) => `k${2 * i}`).sort(),
      );
      const recorded = await rows(url, 'SELECT count(*)::int AS n FROM bank_idempotency_keys');
      assert.deepEqual(recorded, [{ n: 30 }]);
      // Replayed from the records, not run again.
      const again = await ledger.withdraw('alice', 1, keyed('k0'), UNBOUNDED_WORK);
      assert.equal(again.kind, 'recorded');
      assert.equal(await ledger.balance('alice', UNBOUNDED_WORK), 940);
    } finally {
      await ledger.close();
    }
  });

  /** A client of its own that holds a transaction open while `work` runs, then rolls it back. */
  async function holding(url: string, statement: string, work: () => Promise<void>): Promise<void> {
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(statement);
      await work();
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
    }
  }

  test('one key twice in one batch runs once: the second is in flight', async () => {
    const { ledger, url } = await freshLedger({ alice: 100, bob: 100 });
    try {
      let blocked: Promise<unknown>[] = [];
      let keyedOnes: ReturnType<Ledger['withdraw']>[] = [];
      // Bob's row is held: the first two batches (a withdrawal from bob each) wait on it with both
      // batch slots taken, so the two keyed withdrawals queue meanwhile and go together as one
      // batch.
      await holding(url, "SELECT balance FROM accounts WHERE name = 'bob' FOR UPDATE", async () => {
        blocked = [
          ran(ledger.withdraw('bob', 1, undefined, UNBOUNDED_WORK)),
          ran(ledger.withdraw('bob', 1, undefined, UNBOUNDED_WORK)),
        ];
        await new Promise((resolve) => setTimeout(resolve, 100));
        keyedOnes = [
          ledger.withdraw('alice', 7, keyed('twice'), UNBOUNDED_WORK),
          ledger.withdraw('alice', 7, keyed('twice'), UNBOUNDED_WORK),
        ];
      });
      await Promise.all(blocked);
      const outcomes = await Promise.all(keyedOnes);
      assert.deepEqual(outcomes.map((o) => o.kind).sort(), ['in-flight', 'ran']);
      assert.equal(await ledger.balance('alice', UNBOUNDED_WORK), 93);
      assert.equal(await ledger.balance('bob', UNBOUNDED_WORK), 98);
    } finally {
      await ledger.close();
    }
  });

  test('a batch locks its accounts in name order, whatever order it names them, so that batches of two instances queue instead of deadlocking', async () => {
    // Seeded against name order, so that the table's physical order (a scan's) is dan, cat, bea,
    // ann: a batch that locked rows as it scanned them would hold dan, not ann and bea, while it
    // waits.
    const batches: number[] = [];
    const { ledger, url } = await freshLedger({ dan: 100, cat: 100, bea: 100, ann: 100 }, batches);
    const watcher = new pg.Client({ connectionString: url });
    await watcher.connect();
    try {
      for (const [round, names] of [
        ['bea', 'dan', 'ann', 'cat'],
        ['cat', 'ann', 'dan', 'bea'],
      ].entries()) {
        let outcomes: Promise<WithdrawOutcome[]> = Promise.resolve([]);
        // Another transaction holds cat: the batch waits for it holding exactly the accounts before
        // it in name order (ann, bea), and not dan, which it has yet to lock.
        await holding(
          url,
          "SELECT balance FROM accounts WHERE name = 'cat' FOR UPDATE",
          async () => {
            outcomes = Promise.all(
              names.map((name) => ran(ledger.withdraw(name, 1, undefined, UNBOUNDED_WORK))),
            );
            await untilWaitingForLock(watcher);
            const free = await rows(
              url,
              'SELECT name FROM accounts ORDER BY name FOR UPDATE SKIP LOCKED',
            );
            assert.deepEqual(
              free.map((r) => r['name']),
              ['dan'],
              `round ${round + 1}: the accounts the waiting batch does not hold`,
            );
          },
        );
        assert.deepEqual(
          await outcomes,
          names.map(() => ({ kind: 'done', balance: 99 - round })),
        );
      }
      assert.deepEqual(batches, [4, 4], 'each round was one batch');
    } finally {
      await watcher.end();
      await ledger.close();
    }
  });

  test('a key held by another transaction (another instance running it) is in flight: nothing runs, nothing is recorded', async () => {
    const { ledger, url } = await freshLedger({ alice: 100 });
    try {
      await holding(
        url,
        "SELECT pg_advisory_xact_lock(7310003, hashtext('held elsewhere'))",
        async () => {
          assert.deepEqual(
            await ledger.withdraw('alice', 5, keyed('held elsewhere'), UNBOUNDED_WORK),
            {
              kind: 'in-flight',
            },
          );
        },
      );
      assert.equal(await ledger.balance('alice', UNBOUNDED_WORK), 100);
      assert.deepEqual(await rows(url, 'SELECT key FROM bank_idempotency_keys'), []);
      // Once the other transaction is gone, the key runs.
      assert.equal(
        (await ledger.withdraw('alice', 5, keyed('held elsewhere'), UNBOUNDED_WORK)).kind,
        'ran',
      );
    } finally {
      await ledger.close();
    }
  });

  test('a keyed withdrawal that fails alone records nothing; the keyed ones beside it are committed with their records', async () => {
    const { ledger, url } = await freshLedger({ alice: 100, bob: 100 });
    await freezeBob(url);
    try {
      const [first, frozen, second] = await Promise.allSettled([
        ledger.withdraw('alice', 1, keyed('a1'), UNBOUNDED_WORK),
        ledger.withdraw('bob', 1, keyed('b1'), UNBOUNDED_WORK),
        ledger.withdraw('alice', 2, keyed('a2'), UNBOUNDED_WORK),
      ]);
      assert.equal(first.status === 'fulfilled' && first.value.kind, 'ran');
      assert.equal(frozen?.status, 'rejected');
      assert.equal(second.status === 'fulfilled' && second.value.kind, 'ran');
      assert.deepEqual(await rows(url, 'SELECT key FROM bank_idempotency_keys ORDER BY key'), [
        { key: 'a1' },
        { key: 'a2' },
      ]);
      assert.equal(await ledger.balance('alice', UNBOUNDED_WORK), 97);
      assert.equal(await ledger.balance('bob', UNBOUNDED_WORK), 100);
    } finally {
      await ledger.close();
    }
  });
});
