// The SQLite ledger on a file, where withdrawals are group-committed by a worker thread: the same
// answers as one transaction per withdrawal, nothing acknowledged that is not committed, and a
// close() that finishes what was asked before it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { openSqliteLedger } from '../../src/bank/ledger-sqlite.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';
import { UNBOUNDED_WORK } from '../../src/common/work.js';
import { ran } from '../support/keys.js';

const dir = mkdtempSync(join(tmpdir(), 'ledger-group-commit-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshFile = (): string => join(dir, `bank-${++files}.sqlite`);

describe('group-commit SQLite ledger', { timeout: SUITE_TIMEOUT_MS }, () => {
  test('200 concurrent withdrawals of 1 from 100: exactly 100 succeed and the balance ends at 0', async () => {
    const ledger = await openSqliteLedger(freshFile(), new Map([['alice', 100]]));
    try {
      const outcomes = await Promise.all(
        Array.from({ length: 200 }, () =>
          ran(ledger.withdraw('alice', 1, undefined, UNBOUNDED_WORK)),
        ),
      );
      const done = outcomes.filter((o) => o.kind === 'done');
      assert.equal(done.length, 100);
      assert.deepEqual(
        done.map((o) => o.balance).sort((a, b) => a - b),
        Array.from({ length: 100 }, (_, i) => i),
      );
      for (const o of outcomes.filter((o) => o.kind !== 'done'))
        assert.deepEqual(o, { kind: 'insufficient', balance: 0 });
      assert.equal(await ledger.balance('alice', UNBOUNDED_WORK), 0);
    } finally {
      await ledger.close();
    }
  });

  test('acknowledged withdrawals survive a close and reopen; the seed is not applied twice', async () => {
    const file = freshFile();
    const first = await openSqliteLedger(file, new Map([['alice', 1000]]));
    await Promise.all(
      Array.from({ length: 30 }, () => ran(first.withdraw('alice', 10, undefined, UNBOUNDED_WORK))),
    );
    await first.close();
    const second = await openSqliteLedger(
      file,
      new Map([
        ['alice', 1000],
        ['bob', 1],
      ]),
    );
    try {
      assert.equal(await second.balance('alice', UNBOUNDED_WORK), 700);
      assert.equal(await second.balance('bob', UNBOUNDED_WORK), undefined);
      assert.deepEqual(await ran(second.withdraw('alice', 700, undefined, UNBOUNDED_WORK)), {
        kind: 'done',
        balance: 0,
      });
    } finally {
      await second.close();
    }
  });

  test('close() while withdrawals are queued finishes them all, then refuses new ones', async () => {
    const file = freshFile();
    const ledger = await openSqliteLedger(file, new Map([['alice', 1000]]));
    const pending = Array.from({ length: 50 }, () =>
      ran(ledger.withdraw('alice', 1, undefined, UNBOUNDED_WORK)),
    );
    const closed = ledger.close();
    const outcomes = await Promise.all(pending);
    await closed;
    assert.equal(outcomes.filter((o) => o.kind === 'done').length, 50);
    await assert.rejects(ran(ledger.withdraw('alice', 1, undefined, UNBOUNDED_WORK)), /closed/);
    assert.equal(await ledger.ping(), false);
    const reopened = await openSqliteLedger(file, new Map());
    try {
      assert.equal(await reopened.balance('alice', UNBOUNDED_WORK), 950);
    } finally {
      await reopened.close();
    }
  });

  test('a withdrawal that fails alone fails alone; the rest of its batch is committed', async () => {
    const file = freshFile();
    const ledger = await openSqliteLedger(
      file,
      new Map([
        ['alice', 100],
        ['bob', 100],
      ]),
    );
    // The trigger aborts bob's UPDATE statement only: SQLite undoes that statement, the transaction
    // goes on.
    const saboteur = new Database(file);
    saboteur.exec(`CREATE TRIGGER refuse_bob BEFORE UPDATE ON accounts WHEN NEW.name = 'bob'
      BEGIN SELECT RAISE(ABORT, 'bob is frozen'); END;`);
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
      saboteur.close();
      await ledger.close();
    }
  });

  test('a batch whose COMMIT fails fails every withdrawal in it, and none of them is applied', async () => {
    const file = freshFile();
    const ledger = await openSqliteLedger(
      file,
      new Map([
        ['alice', 100],
        ['bob', 100],
      ]),
    );
    // A deferred foreign key is checked at COMMIT: a withdrawal from bob makes the commit fail.
    const saboteur = new Database(file);
    saboteur.exec(`
      CREATE TABLE parents (id INTEGER PRIMARY KEY);
      CREATE TABLE children (parent INTEGER REFERENCES parents (id) DEFERRABLE INITIALLY DEFERRED);
      CREATE TRIGGER poison AFTER UPDATE ON accounts WHEN NEW.name = 'bob'
        BEGIN INSERT INTO children (parent) VALUES (42); END;
    `);
    try {
      const results = await Promise.allSettled([
        ran(ledger.withdraw('alice', 1, undefined, UNBOUNDED_WORK)),
        ran(ledger.withdraw('bob', 1, undefined, UNBOUNDED_WORK)),
        ran(ledger.withdraw('alice', 2, undefined, UNBOUNDED_WORK)),
      ]);
      for (const result of results) {
        assert.equal(result.status, 'rejected');
        assert.match(String(result.reason), /not committed.*FOREIGN KEY/);
      }
      assert.equal(await ledger.balance('alice', UNBOUNDED_WORK), 100);
      assert.equal(await ledger.balance('bob', UNBOUNDED_WORK), 100);
      // The writer itself is fine: once the cause is gone, withdrawals work again.
      saboteur.exec('DROP TRIGGER poison');
      assert.deepEqual(await ran(ledger.withdraw('bob', 1, undefined, UNBOUNDED_WORK)), {
        kind: 'done',
        balance: 99,
      });
      assert.equal(await ledger.ping(), true);
    } finally {
      saboteur.close();
      await ledger.close();
    }
  });
});
