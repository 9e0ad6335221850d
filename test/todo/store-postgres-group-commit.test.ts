// The PostgreSQL to-do store, where writes are group-committed by one statement per batch:
// concurrent writes share batches yet answer as if each ran alone, a failing write fails alone,
// and reads (which share queries too) see every acknowledged write.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { openPostgresTodoStore } from '../../src/todo/store-postgres.js';
import type { TodoStore } from '../../src/todo/store.js';
import { createTestDatabase, postgresSkip, type TestDatabase } from '../support/postgres.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';
import { createTodo, dataOf } from '../support/todos.js';
import { UNBOUNDED_WORK } from '../../src/common/work.js';
import { UNCONDITIONAL } from '../../src/todo/write-conditions.js';
import { ran } from '../support/keys.js';

const skip = await postgresSkip();

describe('group-commit PostgreSQL to-do store', { skip, timeout: SUITE_TIMEOUT_MS }, () => {
  const databases: TestDatabase[] = [];
  after(() => Promise.all(databases.map((d) => d.drop())));
  async function freshStore(): Promise<{ store: TodoStore; url: string }> {
    const database = await createTestDatabase();
    databases.push(database);
    return { store: await openPostgresTodoStore(database.url), url: database.url };
  }

  test('100 concurrent creates take the ids 2 to 101, each once, and each is readable at once', async () => {
    const { store } = await freshStore();
    try {
      const created = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          createTodo(store, { title: `item ${i}`, done: i % 2 === 0 }),
        ),
      );
      assert.deepEqual(
        created.map((t) => Number(t.id)).sort((a, b) => a - b),
        Array.from({ length: 100 }, (_, i) => i + 2),
      );
      const read = await Promise.all(
        created.map((todo) => store.get(Number(todo.id), UNBOUNDED_WORK)),
      );
      assert.deepEqual(read.map(dataOf), created);
    } finally {
      await store.close();
    }
  });

  test('two stores on one database creating at once never hand out an id twice', async () => {
    const { store: first, url } = await freshStore();
    const second = await openPostgresTodoStore(url);
    try {
      const created = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          createTodo(i % 2 === 0 ? first : second, { title: `${i}`, done: false }),
        ),
      );
      assert.deepEqual(
        created.map((t) => Number(t.id)).sort((a, b) => a - b),
        Array.from({ length: 200 }, (_, i) => i + 2),
      );
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  test('two stores on one database racing for the last id (D11): exactly one takes it, keyed or plain', async () => {
    const { store: first, url } = await freshStore();
    const second = await openPostgresTodoStore(url);
    try {
      await ran(
        first.replace(
          Number.MAX_SAFE_INTEGER - 1,
          { title: 'edge', done: false },
          UNCONDITIONAL,
          undefined,
          UNBOUNDED_WORK,
        ),
      );
      const outcomes = await Promise.all(
        Array.from({ length: 40 }, (_, i) => {
          const store = i % 2 === 0 ? first : second;
          const input = { title: `${i}`, done: false };
          return i % 4 < 2
            ? ran(store.create(input, undefined, UNBOUNDED_WORK))
            : store.create(
                input,
                {
                  key: `k${i}`,
                  fingerprint: `fp${i}`,
                  nowMs: 1_000,
                  expiredBeforeMs: 0,
                },
                UNBOUNDED_WORK,
              );
        }),
      );
      const kinds = outcomes.map((outcome) =>
        'outcome' in outcome ? outcome.outcome.kind : outcome.kind,
      );
      assert.equal(kinds.filter((kind) => kind === 'no-id-left').length, 39);
      assert.equal(
        (await second.get(Number.MAX_SAFE_INTEGER, UNBOUNDED_WORK))?.id,
        Number.MAX_SAFE_INTEGER,
      );
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  test('a mixed batch answers each write in the order asked, each change with a version above the one before', async () => {
    const { store } = await freshStore();
    try {
      const [replaced, createdAt5, removed, removedAgain, finished, finishedAgain, missing, next] =
        await Promise.all([
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
            store.replace(
              5,
              { title: 'Five', done: true },
              UNCONDITIONAL,
              undefined,
              UNBOUNDED_WORK,
            ),
          ),
          ran(store.remove(5, UNCONDITIONAL, undefined, UNBOUNDED_WORK)),
          ran(store.remove(5, UNCONDITIONAL, undefined, UNBOUNDED_WORK)),
          ran(store.finish(1, UNCONDITIONAL, undefined, UNBOUNDED_WORK)),
          ran(store.finish(1, UNCONDITIONAL, undefined, UNBOUNDED_WORK)),
          ran(store.finish(5, UNCONDITIONAL, undefined, UNBOUNDED_WORK)),
          createTodo(store, { title: 'after "1" ✓', done: false }),
        ]);
      assert.ok(
        replaced.kind === 'replaced' &&
          createdAt5.kind === 'created' &&
          finished.kind === 'finished',
      );
      assert.deepEqual(dataOf(replaced.todo), { id: 1, title: 'Buy oat milk', done: false });
      assert.deepEqual(dataOf(createdAt5.todo), { id: 5, title: 'Five', done: true });
      assert.deepEqual(removed, { kind: 'removed' });
      assert.deepEqual(removedAgain, { kind: 'missing' });
      assert.deepEqual(dataOf(finished.todo), { id: 1, title: 'Buy oat milk', done: true });
      const versions = [replaced.todo.version, createdAt5.todo.version, finished.todo.version];
      assert.deepEqual(
        versions,
        [...new Set(versions)].sort((a, b) => a - b),
      );
      assert.deepEqual(finishedAgain, { kind: 'already-done' });
      assert.deepEqual(missing, { kind: 'missing' });
      assert.deepEqual(next, { id: 2, title: 'after "1" ✓', done: false });
      assert.deepEqual(
        (
          await Promise.all([
            store.get(1, UNBOUNDED_WORK),
            store.get(2, UNBOUNDED_WORK),
            store.get(5, UNBOUNDED_WORK),
          ])
        ).map(dataOf),
        [
          { id: 1, title: 'Buy oat milk', done: true },
          { id: 2, title: 'after "1" ✓', done: false },
          undefined,
        ],
      );
    } finally {
      await store.close();
    }
  });

  test('a create that fails fails alone; the rest of its batch is committed', async () => {
    const { store, url } = await freshStore();
    // With an item at the largest BIGINT, the next id is out of range: that create cannot be made.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(
      `INSERT INTO todos (id, title, done) VALUES (9223372036854775807, '"last"', false)`,
    );
    await client.end();
    try {
      const [created, replaced, finished] = await Promise.allSettled([
        createTodo(store, { title: 'one too many', done: false }),
        ran(
          store.replace(
            5,
            { title: 'Five', done: false },
            UNCONDITIONAL,
            undefined,
            UNBOUNDED_WORK,
          ),
        ),
        ran(store.finish(1, UNCONDITIONAL, undefined, UNBOUNDED_WORK)),
      ]);
      assert.equal(created?.status, 'rejected');
      assert.match(String(created.reason), /out of range/);
      assert.ok(
        replaced?.status === 'fulfilled' && replaced.value.kind === 'created',
        'the replace created item 5',
      );
      assert.ok(
        finished?.status === 'fulfilled' && finished.value.kind === 'finished',
        'the finish finished item 1',
      );
      assert.deepEqual(dataOf(finished.value.todo), { id: 1, title: 'Buy milk', done: true });
      assert.deepEqual(dataOf(await store.get(5, UNBOUNDED_WORK)), {
        id: 5,
        title: 'Five',
        done: false,
      });
    } finally {
      await store.close();
    }
  });

  test('close() while writes are queued finishes them, then refuses new ones; they survive a reopen', async () => {
    const { store, url } = await freshStore();
    const pending = Array.from({ length: 30 }, (_, i) =>
      createTodo(store, { title: `t${i}`, done: i % 2 === 0 }),
    );
    const closed = store.close();
    assert.equal((await Promise.all(pending)).length, 30);
    await closed;
    await assert.rejects(createTodo(store, { title: 'late', done: false }), /closed/);
    const reopened = await openPostgresTodoStore(url);
    try {
      assert.equal((await reopened.get(31, UNBOUNDED_WORK))?.title.startsWith('t'), true);
      assert.equal(await reopened.get(32, UNBOUNDED_WORK), undefined);
    } finally {
      await reopened.close();
    }
  });
});
