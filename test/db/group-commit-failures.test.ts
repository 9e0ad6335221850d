// Group commit through a writer thread (src/db/group-commit*.ts) when writes fail: an operation
// that fails alone fails with SQLite's code while the rest of its batch commits, and a writer
// thread that dies fails what it held and every later write, and makes the store not ready.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { isStoreFault, type StoreFault } from '../../src/db/store-errors.js';
import { connectSqlite } from '../../src/db/sqlite/sqlite.js';
import type { SqliteStore } from '../../src/db/sqlite/store.js';
import { openTestWriteStore } from '../support/test-store.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';
import type { TestWrite } from '../support/test-writes.js';
import { UNBOUNDED_WORK } from '../../src/common/work.js';
import { ran } from '../support/keys.js';

const dir = mkdtempSync(join(tmpdir(), 'group-commit-failures-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

function openTestStore(
  faults: StoreFault[] = [],
  synchronous?: 'FULL' | 'OFF',
): Promise<SqliteStore<TestWrite, number>> {
  return openTestWriteStore(join(dir, `db-${++files}.sqlite`), {
    synchronous,
    observer: { fault: (fault) => faults.push(fault) },
  });
}

const insert = (value: number): TestWrite => ({ kind: 'insert', value });

describe('group commit when writes fail', { timeout: SUITE_TIMEOUT_MS }, () => {
  test('in one batch, an operation that fails alone fails with its SQLite code and message, and the others commit', async () => {
    const store = await openTestStore();
    try {
      const outcomes = await Promise.allSettled([
        ran(store.write(insert(1), undefined, UNBOUNDED_WORK)),
        ran(store.write(insert(-1), undefined, UNBOUNDED_WORK)),
        ran(store.write(insert(2), undefined, UNBOUNDED_WORK)),
      ]);
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      const refused = outcomes[1];
      assert.ok(refused?.status === 'rejected');
      assert.equal((refused.reason as { code?: unknown }).code, 'SQLITE_CONSTRAINT_CHECK');
      assert.match((refused.reason as Error).message, /CHECK constraint failed/);
      const rows = store.read(() =>
        store.db.prepare<[], { x: number }>('SELECT x FROM v ORDER BY x').all(),
      );
      assert.deepEqual(rows, [{ x: 1 }, { x: 2 }]);
      assert.equal(await store.ready(), true);
    } finally {
      await store.close();
    }
  });

  test('a write after which SQLite rolled back the whole batch fails the batch: the writes after it are not committed one by one', async () => {
    const store = await openTestStore();
    try {
      const outcomes = await Promise.allSettled([
        ran(store.write(insert(1), undefined, UNBOUNDED_WORK)),
        ran(store.write({ kind: 'rollback-and-fail' }, undefined, UNBOUNDED_WORK)),
        ran(store.write(insert(2), undefined, UNBOUNDED_WORK)),
      ]);
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ['rejected', 'rejected', 'rejected'],
      );
      for (const outcome of outcomes) {
        assert.match(
          outcome.status === 'rejected' ? (outcome.reason as Error).message : '',
          /^batch not committed: the transaction was rolled back under the write$/,
        );
      }
      assert.deepEqual(
        store.read(() => store.db.prepare('SELECT x FROM v').all()),
        [],
        'nothing of the batch is stored',
      );
      assert.equal(
        await ran(store.write(insert(3), undefined, UNBOUNDED_WORK)),
        1,
        'the next batch commits',
      );
    } finally {
      await store.close();
    }
  });

  const says = {
    exit: /^the database writer stopped \(exit code 7\)/,
    throw: /^the database writer failed: the writer thread broke$/,
  };
  for (const how of ['exit', 'throw'] as const) {
    test(`a writer thread that dies (${how}) fails the writes it held and every later one as unavailable, and the store is not ready`, async () => {
      const faults: StoreFault[] = [];
      const store = await openTestStore(faults);
      try {
        assert.equal(await ran(store.write(insert(1), undefined, UNBOUNDED_WORK)), 1);
        // Exiting inside the write loses its batch; an error thrown just after it may come before
        // or after its commit is answered.
        const dying = ran(store.write({ kind: 'die', how }, undefined, UNBOUNDED_WORK));
        if (how === 'exit')
          await assert.rejects(dying, (error: unknown) => isStoreFault(error, 'unavailable'));
        else
          await dying.catch((error: unknown) =>
            assert.ok(isStoreFault(error, 'unavailable'), String(error)),
          );
        // The thread's error reaches this thread in a later turn: wait for it (readiness says
        // when).
        for (let turns = 0; turns < 200 && (await store.ready()); turns++)
          await new Promise((resolve) => setTimeout(resolve, 10));
        assert.equal(await store.ready(), false);
        await assert.rejects(
          ran(store.write(insert(2), undefined, UNBOUNDED_WORK)),
          (error: unknown) => isStoreFault(error, 'unavailable') && says[how].test(error.message),
        );
        assert.ok(
          faults.length >= 1 && faults.every((fault) => fault === 'unavailable'),
          faults.join(', '),
        );
        assert.deepEqual(
          store.read(() => store.db.prepare('SELECT x FROM v').all()),
          [{ x: 1 }],
          'reads go on',
        );
      } finally {
        await store.close();
      }
    });
  }
});

describe('the SQLite settings a store is opened with', { timeout: SUITE_TIMEOUT_MS }, () => {
  test('synchronous is FULL on both connections unless OFF is asked for, and then OFF on both', async () => {
    for (const [asked, expected] of [
      [undefined, 2],
      ['FULL', 2],
      ['OFF', 0],
    ] as const) {
      const store = await openTestStore([], asked);
      try {
        assert.equal(
          store.db.pragma('synchronous', { simple: true }),
          expected,
          `this thread's connection, ${asked}`,
        );
        assert.equal(
          await ran(store.write({ kind: 'synchronous' }, undefined, UNBOUNDED_WORK)),
          expected,
          `the writer's connection, ${asked}`,
        );
      } finally {
        await store.close();
      }
    }
  });

  test('readiness does not write while writes work: a write lock held elsewhere leaves the store ready', async () => {
    const store = await openTestStore();
    const location = store.db.name;
    const other = connectSqlite(location);
    try {
      other.exec('BEGIN IMMEDIATE');
      assert.equal(await store.ready(), true);
    } finally {
      other.exec('ROLLBACK');
      other.close();
      await store.close();
    }
  });
});
