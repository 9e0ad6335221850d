// The to-do store on a SQLite file, where writes are group-committed by a worker thread: concurrent
// writes share batches yet answer as if each ran alone, and reads see every acknowledged write.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { openSqliteTodoStore } from '../../src/todo/store-sqlite.js';
import { LARGEST_ID_SQL, TODO_MIGRATIONS } from '../../src/todo/store-sqlite-schema.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';
import { createTodo, dataOf } from '../support/todos.js';
import { UNBOUNDED_WORK } from '../../src/common/work.js';
import { UNCONDITIONAL } from '../../src/todo/write-conditions.js';
import { ran } from '../support/keys.js';

const dir = mkdtempSync(join(tmpdir(), 'todo-group-commit-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshFile = (): string => join(dir, `todo-${++files}.sqlite`);

describe('group-commit SQLite to-do store', { timeout: SUITE_TIMEOUT_MS }, () => {
  test('a create finds the largest id through the primary key: it never scans the table, whatever its size', () => {
    const db = new Database(':memory:');
    try {
      for (const migration of TODO_MIGRATIONS) db.exec(migration.sql);
      const plan = db.prepare(`EXPLAIN QUERY PLAN ${LARGEST_ID_SQL}`).all() as {
        detail: string;
      }[];
      const steps = plan.map((step) => step.detail);
      assert.ok(
        steps.some((step) => /^SEARCH todos/.test(step)),
        steps.join(' | '),
      );
      assert.ok(!steps.some((step) => /^SCAN todos/.test(step)), steps.join(' | '));
    } finally {
      db.close();
    }
  });

  test('100 concurrent creates take the ids 2 to 101, each once, and each is readable at once', async () => {
    const store = await openSqliteTodoStore(freshFile());
    try {
      const created = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          createTodo(store, { title: `item ${i}`, done: false }),
        ),
      );
      assert.deepEqual(
        created.map((t) => Number(t.id)).sort((a, b) => a - b),
        Array.from({ length: 100 }, (_, i) => i + 2),
      );
      for (const todo of created)
        assert.deepEqual(dataOf(await store.get(Number(todo.id), UNBOUNDED_WORK)), todo);
    } finally {
      await store.close();
    }
  });

  test('20 concurrent finishes of one item: exactly one finishes it, the others find it done', async () => {
    const store = await openSqliteTodoStore(freshFile());
    try {
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, () =>
          ran(store.finish(1, UNCONDITIONAL, undefined, UNBOUNDED_WORK)),
        ),
      );
      assert.equal(outcomes.filter((o) => o.kind === 'finished').length, 1);
      assert.equal(outcomes.filter((o) => o.kind === 'already-done').length, 19);
      assert.deepEqual(await ran(store.finish(2, UNCONDITIONAL, undefined, UNBOUNDED_WORK)), {
        kind: 'missing',
      });
    } finally {
      await store.close();
    }
  });

  test('a mixed batch answers each write in the order asked, each change with the next version', async () => {
    const store = await openSqliteTodoStore(freshFile());
    try {
      const [replaced, createdAt5, removed, removedAgain, finished] = await Promise.all([
        ran(
          store.replace(
            1,
            { title: 'Buy oat milk', done: false },
            UNCONDITIONAL,
            undefined,
            UNBOUNDED_WORK,
          ),
        ),
        ran(
          store.replace(5, { title: 'Five', done: true }, UNCONDITIONAL, undefined, UNBOUNDED_WORK),
        ),
        ran(store.remove(5, UNCONDITIONAL, undefined, UNBOUNDED_WORK)),
        ran(store.remove(5, UNCONDITIONAL, undefined, UNBOUNDED_WORK)),
        ran(store.finish(1, UNCONDITIONAL, undefined, UNBOUNDED_WORK)),
      ]);
      // The seeded item has version 1; a remove gives no version, a finish the next one.
      assert.deepEqual(replaced, {
        kind: 'replaced',
        todo: { id: 1, title: 'Buy oat milk', done: false, version: 2 },
      });
      assert.deepEqual(createdAt5, {
        kind: 'created',
        todo: { id: 5, title: 'Five', done: true, version: 3 },
      });
      assert.deepEqual(removed, { kind: 'removed' });
      assert.deepEqual(removedAgain, { kind: 'missing' });
      assert.deepEqual(finished, {
        kind: 'finished',
        todo: { id: 1, title: 'Buy oat milk', done: true, version: 4 },
      });
    } finally {
      await store.close();
    }
  });

  test('close() while writes are queued finishes them; they survive a reopen', async () => {
    const file = freshFile();
    const store = await openSqliteTodoStore(file);
    const pending = Array.from({ length: 30 }, (_, i) =>
      createTodo(store, { title: `t${i}`, done: i % 2 === 0 }),
    );
    const closed = store.close();
    assert.equal((await Promise.all(pending)).length, 30);
    await closed;
    await assert.rejects(createTodo(store, { title: 'late', done: false }), /closed/);
    const reopened = await openSqliteTodoStore(file);
    try {
      assert.deepEqual(dataOf(await reopened.get(31, UNBOUNDED_WORK)), {
        id: 31,
        title: 't29',
        done: false,
      });
      assert.equal(await reopened.get(32, UNBOUNDED_WORK), undefined);
    } finally {
      await reopened.close();
    }
  });
});
