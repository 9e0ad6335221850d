// The group-commit writer at its limits, through both SQLite stores on a file: more writes queued
// than one batch holds are all applied, once each, in the order asked; and a read that follows an
// acknowledged write sees it, even when another read holds this turn's snapshot.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { openSqliteLedger } from '../../src/bank/ledger-sqlite.js';
import { GROUP_COMMIT_LIMITS } from '../../src/db/sqlite/group-commit.js';
import { openSqliteTodoStore } from '../../src/todo/store-sqlite.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';
import { createTodo, dataOf } from '../support/todos.js';
import { UNBOUNDED_WORK } from '../../src/common/work.js';
import { UNCONDITIONAL } from '../../src/todo/write-conditions.js';
import { ran } from '../support/keys.js';

const dir = mkdtempSync(join(tmpdir(), 'group-commit-limits-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshFile = (): string => join(dir, `db-${++files}.sqlite`);

describe('group commit at its limits', { timeout: SUITE_TIMEOUT_MS }, () => {
  // Two full batches and a few more: the queue is cut twice, and each cut must lose and repeat
  // nothing.
  const batchOpsMax = GROUP_COMMIT_LIMITS.opsMax;
  const queued = 2 * batchOpsMax + 3;

  test(`${queued} withdrawals queued at once (more than two batches of ${batchOpsMax}) are each applied once, in the order asked`, async () => {
    const file = freshFile();
    const ledger = await openSqliteLedger(file, new Map([['alice', queued + 5]]));
    try {
      const outcomes = await Promise.all(
        Array.from({ length: queued }, () =>
          ran(ledger.withdraw('alice', 1, undefined, UNBOUNDED_WORK)),
        ),
      );
      assert.deepEqual(
        outcomes,
        Array.from({ length: queued }, (_, i) => ({ kind: 'done', balance: queued + 4 - i })),
      );
      assert.equal(await ledger.balance('alice', UNBOUNDED_WORK), 5);
    } finally {
      await ledger.close();
    }
    const reopened = await openSqliteLedger(file, new Map());
    try {
      assert.equal(
        await reopened.balance('alice', UNBOUNDED_WORK),
        5,
        'every acknowledged withdrawal is on disk',
      );
    } finally {
      await reopened.close();
    }
  });

  test(`${queued} creates queued at once take the ids 2 to ${queued + 1}, in the order asked, and each is stored`, async () => {
    const store = await openSqliteTodoStore(freshFile());
    try {
      const created = await Promise.all(
        Array.from({ length: queued }, (_, i) =>
          createTodo(store, { title: `t${i}`, done: i % 2 === 0 }),
        ),
      );
      assert.deepEqual(
        created,
        Array.from({ length: queued }, (_, i) => ({
          id: i + 2,
          title: `t${i}`,
          done: i % 2 === 0,
        })),
      );
      for (const todo of created)
        assert.deepEqual(dataOf(await store.get(todo.id, UNBOUNDED_WORK)), todo);
      assert.equal(await store.get(queued + 2, UNBOUNDED_WORK), undefined);
    } finally {
      await store.close();
    }
  });

  test('a read right after an acknowledged write sees it, though other reads keep a snapshot open in every turn', async () => {
    const store = await openSqliteTodoStore(freshFile());
    // A reader in every turn: whenever an acknowledgement arrives, this turn's read snapshot is
    // already open, and only ending it on the acknowledgement lets the next read see the write.
    let reading = true;
    const readEveryTurn = (): void => {
      if (!reading) return;
      void store.get(1, UNBOUNDED_WORK);
      setImmediate(readEveryTurn);
    };
    readEveryTurn();
    try {
      for (let i = 0; i < 100; i++) {
        const created = await createTodo(store, { title: `seen ${i}`, done: false });
        assert.deepEqual(
          dataOf(await store.get(created.id, UNBOUNDED_WORK)),
          created,
          `write ${i}`,
        );
        const finished = await ran(store.finish(1, UNCONDITIONAL, undefined, UNBOUNDED_WORK));
        assert.equal(finished.kind, i === 0 ? 'finished' : 'already-done');
        assert.deepEqual(dataOf(await store.get(1, UNBOUNDED_WORK)), {
          id: 1,
          title: 'Buy milk',
          done: true,
        });
        await ran(
          store.replace(
            1,
            { title: 'Buy milk', done: false },
            UNCONDITIONAL,
            undefined,
            UNBOUNDED_WORK,
          ),
        );
        assert.deepEqual(dataOf(await store.get(1, UNBOUNDED_WORK)), {
          id: 1,
          title: 'Buy milk',
          done: false,
        });
        await ran(store.finish(1, UNCONDITIONAL, undefined, UNBOUNDED_WORK));
      }
    } finally {
      reading = false;
      await store.close();
    }
  });

  test('a balance read right after an acknowledged withdrawal shows it, though other reads keep a snapshot open in every turn', async () => {
    const ledger = await openSqliteLedger(freshFile(), new Map([['alice', 1000]]));
    let reading = true;
    const readEveryTurn = (): void => {
      if (!reading) return;
      void ledger.balance('alice', UNBOUNDED_WORK);
      setImmediate(readEveryTurn);
    };
    readEveryTurn();
    try {
      for (let i = 1; i <= 100; i++) {
        assert.deepEqual(await ran(ledger.withdraw('alice', 1, undefined, UNBOUNDED_WORK)), {
          kind: 'done',
          balance: 1000 - i,
        });
        assert.equal(await ledger.balance('alice', UNBOUNDED_WORK), 1000 - i, `withdrawal ${i}`);
      }
    } finally {
      reading = false;
      await ledger.close();
    }
  });
});
