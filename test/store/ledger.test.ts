// The promises of Ledger, checked against every backend with the same tests: each test gets a new,
// empty database, opened the way the service opens it.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import type { Ledger, WithdrawOutcome } from '../../src/bank/ledger.js';
import { LEDGER_POSTGRES_MIGRATIONS } from '../../src/bank/ledger-postgres.js';
import { openLedger } from '../../src/bank/service.js';
import { isPromise } from '../../src/common/eventually.js';
import { openTodoStore } from '../../src/todo/service.js';
import { TODO_POSTGRES_MIGRATIONS } from '../../src/todo/store-postgres-migrations.js';
import { assertCutByBytes, LARGE, recordBatches } from '../support/batches.js';
import { readBooks, readRows } from '../support/journal.js';
import { assertExpiredKeyRunsAgain, assertPrunesBefore, keyedWrite, ran } from '../support/keys.js';
import { storeBackends, type FreshDatabase } from '../support/store-backends.js';
import { suiteUnless } from '../support/suite.js';
import { dataOf } from '../support/todos.js';
import { UNBOUNDED_WORK } from '../../src/common/work.js';

const ACCOUNTS: ReadonlyMap<string, number> = new Map([
  ['alice', 100],
  ['bob', 5],
  ["zoë 💰 o'brien", 42],
  ['big', Number.MAX_SAFE_INTEGER],
]);

for (const backend of await storeBackends()) {
  suiteUnless(backend.skip, `Ledger on ${backend.name}`, () => {
    let fresh: FreshDatabase;
    let ledger: Ledger;
    const reopen = async (accounts: ReadonlyMap<string, number>): Promise<void> => {
      await ledger.close();
      ledger = await openLedger(fresh.db, accounts);
    };

    beforeEach(async () => {
      fresh = await backend.fresh();
      ledger = await openLedger(fresh.db, ACCOUNTS);
    });
    afterEach(async () => {
      await ledger.close();
      await fresh.drop();
    });

    test('a new database holds the initial accounts', async () => {
      for (const [name, balance] of ACCOUNTS)
        assert.equal(await ledger.balance(name, UNBOUNDED_WORK), balance);
    });

    test('on SQLite a balance is read at once, without a promise; elsewhere it may wait', async () => {
      const [name, balance] = [...ACCOUNTS][0] as [string, number];
      const read = ledger.balance(name, UNBOUNDED_WORK);
      if (backend.name === 'sqlite')
        assert.equal(isPromise(read), false, 'no promise for a read that needs no wait');
      assert.equal(await read, balance);
    });

    test('an unknown account has no balance', async () => {
      assert.equal(await ledger.balance('carol', UNBOUNDED_WORK), undefined);
      assert.equal(await ledger.balance('Alice', UNBOUNDED_WORK), undefined);
    });

    test('a name holding NUL is an unknown account, never a failure', async () => {
      assert.equal(await ledger.balance('\u0000', UNBOUNDED_WORK), undefined);
      assert.equal(await ledger.balance('alice\u0000', UNBOUNDED_WORK), undefined);
      assert.deepEqual(await ran(ledger.withdraw('alice\u0000', 1, undefined, UNBOUNDED_WORK)), {
        kind: 'unknown-account',
      });
    });

    test('withdraw takes the amount and reports the new balance', async () => {
      assert.deepEqual(await ran(ledger.withdraw('alice', 30, undefined, UNBOUNDED_WORK)), {
        kind: 'done',
        balance: 70,
      });
      assert.equal(await ledger.balance('alice', UNBOUNDED_WORK), 70);
    });

    test('withdrawing exactly the balance is allowed and leaves 0', async () => {
      assert.deepEqual(await ran(ledger.withdraw('bob', 5, undefined, UNBOUNDED_WORK)), {
        kind: 'done',
        balance: 0,
      });
    });

    test('too large a withdrawal is refused with the current balance, and changes nothing', async () => {
      assert.deepEqual(await ran(ledger.withdraw('bob', 6, undefined, UNBOUNDED_WORK)), {
        kind: 'insufficient',
        balance: 5,
      });
      assert.equal(await ledger.balance('bob', UNBOUNDED_WORK), 5);
    });

    test('withdrawing from an unknown account says so', async () => {
      assert.deepEqual(await ran(ledger.withdraw('carol', 1, undefined, UNBOUNDED_WORK)), {
        kind: 'unknown-account',
      });
    });

    test('names with quotes and emoji work like any other', async () => {
      assert.deepEqual(await ran(ledger.withdraw("zoë 💰 o'brien", 2, undefined, UNBOUNDED_WORK)), {
        kind: 'done',
        balance: 40,
      });
    });

    test('withdrawals asked together (one batch) are decided in the order asked, each with its own outcome', async () => {
      const zoe = "zoë 💰 o'brien";
      const outcomes = await Promise.all([
        ran(ledger.withdraw('alice', 30, undefined, UNBOUNDED_WORK)),
        ran(ledger.withdraw('bob', 6, undefined, UNBOUNDED_WORK)),
        ran(ledger.withdraw('carol', 1, undefined, UNBOUNDED_WORK)),
        ran(ledger.withdraw('alice', 70, undefined, UNBOUNDED_WORK)),
        ran(ledger.withdraw('alice', 1, undefined, UNBOUNDED_WORK)),
        ran(ledger.withdraw('bob', 5, undefined, UNBOUNDED_WORK)),
        ran(ledger.withdraw(zoe, 2, undefined, UNBOUNDED_WORK)),
        ran(ledger.withdraw('nul\u0000name', 1, undefined, UNBOUNDED_WORK)),
      ]);
      const expected: WithdrawOutcome[] = [
        { kind: 'done', balance: 70 },
        { kind: 'insufficient', balance: 5 },
        { kind: 'unknown-account' },
        { kind: 'done', balance: 0 },
        { kind: 'insufficient', balance: 0 },
        { kind: 'done', balance: 0 },
        { kind: 'done', balance: 40 },
        { kind: 'unknown-account' },
      ];
      assert.deepEqual(outcomes, expected);
      assert.deepEqual(
        await Promise.all(
          ['alice', 'bob', 'carol', zoe].map((name) => ledger.balance(name, UNBOUNDED_WORK)),
        ),
        [0, 0, undefined, 40],
      );
    });

    test('balances up to 2^53-1 stay exact', async () => {
      assert.deepEqual(await ran(ledger.withdraw('big', 1, undefined, UNBOUNDED_WORK)), {
        kind: 'done',
        balance: Number.MAX_SAFE_INTEGER - 1,
      });
      assert.deepEqual(
        await ran(ledger.withdraw('bob', Number.MAX_SAFE_INTEGER, undefined, UNBOUNDED_WORK)),
        {
          kind: 'insufficient',
          balance: 5,
        },
      );
    });

    test('no overdraft under 200 concurrent withdrawals', async () => {
      const outcomes = await Promise.all(
        Array.from({ length: 200 }, () =>
          ran(ledger.withdraw('alice', 7, undefined, UNBOUNDED_WORK)),
        ),
      );
      const done = outcomes.filter((o) => o.kind === 'done');
      assert.equal(done.length, Math.floor(100 / 7));
      assert.equal(outcomes.filter((o) => o.kind === 'insufficient').length, 200 - done.length);
      assert.equal(await ledger.balance('alice', UNBOUNDED_WORK), 100 - 7 * done.length);
      // Every success saw a different balance: no two withdrawals read the same one.
      assert.equal(
        new Set(done.map((o) => (o.kind === 'done' ? o.balance : -1))).size,
        done.length,
      );
    });

    test('balances survive closing and reopening', async () => {
      await ran(ledger.withdraw('alice', 11, undefined, UNBOUNDED_WORK));
      await reopen(ACCOUNTS);
      assert.equal(await ledger.balance('alice', UNBOUNDED_WORK), 89);
    });

    test('initial accounts go only into an empty database', async () => {
      await ran(ledger.withdraw('alice', 1, undefined, UNBOUNDED_WORK));
      await reopen(
        new Map([
          ['alice', 500],
          ['dave', 9],
        ]),
      );
      assert.equal(await ledger.balance('alice', UNBOUNDED_WORK), 99);
      assert.equal(await ledger.balance('dave', UNBOUNDED_WORK), undefined);
    });

    test('ping answers true while open', async () => {
      assert.equal(await ledger.ping(), true);
    });

    test('a batch of withdrawals carries at most 4 MiB: long account names (3 bytes a UTF-16 unit) go at most three a batch', async () => {
      const recorder = recordBatches();
      await ledger.close();
      ledger = await openLedger(fresh.db, ACCOUNTS, { observer: recorder.observer });
      const outcomes = await Promise.all(
        Array.from({ length: 7 }, () =>
          ran(ledger.withdraw('x'.repeat(LARGE), 1, undefined, UNBOUNDED_WORK)),
        ),
      );
      assert.deepEqual(
        outcomes,
        Array.from({ length: 7 }, () => ({ kind: 'unknown-account' })),
      );
      assertCutByBytes(recorder.batches, 7);
    });

    test('a withdrawal under a new key takes the money once, journals it and records its outcome; the key then replays that record', async () => {
      const outcome = { kind: 'done', balance: 70 };
      assert.deepEqual(await ledger.withdraw('alice', 30, keyedWrite('k', 1_000), UNBOUNDED_WORK), {
        kind: 'ran',
        outcome,
      });
      assert.deepEqual(await ledger.withdraw('alice', 30, keyedWrite('k', 2_000), UNBOUNDED_WORK), {
        kind: 'recorded',
        fingerprint: 'fp-k',
        outcome,
        recordedAtMs: 1_000,
      });
      assert.equal(await ledger.balance('alice', UNBOUNDED_WORK), 70);
      assert.deepEqual((await readBooks(fresh.db)).get('alice'), {
        balance: 70,
        journalTotal: 30,
        journalRows: 1,
      });
    });

    test('a withdrawal under a key records a refusal as its outcome and takes nothing: unknown account, NUL in the name, too little money', async () => {
      const refusals: [string, number, WithdrawOutcome][] = [
        ['carol', 1, { kind: 'unknown-account' }],
        ['alice\u0000', 1, { kind: 'unknown-account' }],
        ['bob', 6, { kind: 'insufficient', balance: 5 }],
      ];
      for (const [i, [account, amount, outcome]] of refusals.entries()) {
        assert.deepEqual(
          await ledger.withdraw(account, amount, keyedWrite(`k${i}`, 1_000), UNBOUNDED_WORK),
          {
            kind: 'ran',
            outcome,
          },
        );
        assert.deepEqual(
          await ledger.withdraw(account, amount, keyedWrite(`k${i}`, 2_000), UNBOUNDED_WORK),
          {
            kind: 'recorded',
            fingerprint: `fp-k${i}`,
            outcome,
            recordedAtMs: 1_000,
          },
        );
      }
      assert.deepEqual((await readBooks(fresh.db)).get('bob'), {
        balance: 5,
        journalTotal: 0,
        journalRows: 0,
      });
    });

    test('a withdrawal under a key recorded before expiredBeforeMs is absent: it runs again', async () => {
      await assertExpiredKeyRunsAgain((key) => ledger.withdraw('alice', 10, key, UNBOUNDED_WORK));
      assert.equal(await ledger.balance('alice', UNBOUNDED_WORK), 80);
    });

    test('pruneKeys deletes the key records from before its bound, and only those', async () => {
      await assertPrunesBefore(
        (key) => ledger.withdraw('alice', 1, key, UNBOUNDED_WORK),
        (before) => ledger.pruneKeys(before),
      );
    });

    test('the ledger and the to-do store share one database, each keeping its migrations under its own service name', async () => {
      const todos = await openTodoStore(fresh.db);
      try {
        assert.deepEqual(dataOf(await todos.get(1, UNBOUNDED_WORK)), {
          id: 1,
          title: 'Buy milk',
          done: false,
        });
        const rows = await readRows<{ service: string; version: number }>(
          fresh.db,
          'SELECT service, version FROM schema_migrations ORDER BY service, version',
        );
        const versions = (service: string, migrations: readonly { version: number }[]): string[] =>
          migrations.map(({ version }) => `${service} ${version}`);
        const both =
          backend.name === 'postgres'
            ? [
                ...versions('bank', LEDGER_POSTGRES_MIGRATIONS),
                ...versions('todo', TODO_POSTGRES_MIGRATIONS),
              ]
            : ['bank 1', 'bank 2', 'bank 3', 'todo 1', 'todo 2', 'todo 3', 'todo 4'];
        assert.deepEqual(
          rows.map((row) => `${row.service} ${row.version}`),
          both,
        );
      } finally {
        await todos.close();
      }
    });

    // A PostgreSQL promise only (SQLite stores NUL): defined for it alone, so that the runner's
    // skipped count keeps meaning "a prerequisite is missing".
    if (backend.name === 'postgres') {
      test('an initial account named with NUL, which PostgreSQL cannot store, stops the ledger from opening with that reason', async () => {
        const empty = await backend.fresh();
        try {
          await assert.rejects(
            openLedger(empty.db, new Map([['nul\u0000name', 1]])),
            /NUL character/,
          );
        } finally {
          await empty.drop();
        }
      });
    }
  });
}
