// The promises of TodoStore, checked against every backend with the same tests: each test gets a
// new, empty database, opened the way the service opens it.
import assert from 'node:assert/strict';
import type { FinishOutcome } from '../../src/todo/store.js';
import { afterEach, beforeEach, test } from 'node:test';
import { isPromise } from '../../src/common/eventually.js';
import { openTodoStore } from '../../src/todo/service.js';
import type { StoredTodo, TodoStore } from '../../src/todo/store.js';
import { assertCutByBytes, LARGE, recordBatches } from '../support/batches.js';
import { assertExpiredKeyRunsAgain, assertPrunesBefore, keyedWrite, ran } from '../support/keys.js';
import { storeBackends, type FreshDatabase } from '../support/store-backends.js';
import { suiteUnless } from '../support/suite.js';
import { createTodo, dataOf } from '../support/todos.js';
import { UNBOUNDED_WORK } from '../../src/common/work.js';
import { UNCONDITIONAL } from '../../src/todo/write-conditions.js';

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const item = (title: string, done = false) => ({ title, done });

/** The version a write gave its item (a failed assertion for a write that changed nothing). */
function versionOf(outcome: { readonly kind: string; readonly todo?: StoredTodo }): number {
  assert.ok(outcome.todo !== undefined, `a written item, not ${outcome.kind}`);
  return outcome.todo.version;
}

for (const backend of await storeBackends()) {
  suiteUnless(backend.skip, `TodoStore on ${backend.name}`, () => {
    let fresh: FreshDatabase;
    let store: TodoStore;
    const reopen = async (): Promise<TodoStore> => {
      await store.close();
      store = await openTodoStore(fresh.db);
      return store;
    };

    beforeEach(async () => {
      fresh = await backend.fresh();
      store = await openTodoStore(fresh.db);
    });
    afterEach(async () => {
      await store.close();
      await fresh.drop();
    });

    test('a new database holds item 1, not done', async () => {
      assert.deepEqual(dataOf(await store.get(1, UNBOUNDED_WORK)), {
        id: 1,
        title: 'Buy milk',
        done: false,
      });
      assert.equal(await store.get(2, UNBOUNDED_WORK), undefined);
    });

    test('on SQLite a read answers at once, without a promise; elsewhere it may wait', async () => {
      const read = store.get(1, UNBOUNDED_WORK);
      if (backend.name === 'sqlite')
        assert.equal(isPromise(read), false, 'no promise for a read that needs no wait');
      assert.deepEqual(dataOf(await read), { id: 1, title: 'Buy milk', done: false });
    });

    test('create takes the largest existing id + 1', async () => {
      assert.equal((await createTodo(store, item('a'))).id, 2);
      await ran(store.replace(10, item('ten'), UNCONDITIONAL, undefined, UNBOUNDED_WORK));
      assert.equal((await createTodo(store, item('b'))).id, 11);
      await ran(store.remove(11, UNCONDITIONAL, undefined, UNBOUNDED_WORK));
      await ran(store.remove(10, UNCONDITIONAL, undefined, UNBOUNDED_WORK));
      assert.equal(
        (await createTodo(store, item('c'))).id,
        3,
        'the largest id that still exists counts',
      );
    });

    test('create takes 1 in an empty store, and follows negative ids', async () => {
      await ran(store.remove(1, UNCONDITIONAL, undefined, UNBOUNDED_WORK));
      assert.equal((await createTodo(store, item('first'))).id, 1);
      await ran(store.remove(1, UNCONDITIONAL, undefined, UNBOUNDED_WORK));
      await ran(store.replace(-5, item('negative'), UNCONDITIONAL, undefined, UNBOUNDED_WORK));
      assert.equal((await createTodo(store, item('after -5'))).id, -4);
    });

    test('create keeps title and done as given', async () => {
      const created = await createTodo(store, item('done already', true));
      assert.deepEqual(created, { id: 2, title: 'done already', done: true });
      assert.deepEqual(dataOf(await store.get(2, UNBOUNDED_WORK)), created);
    });

    test('a create that would pass 2^53-1 is refused and stores nothing (D11)', async () => {
      await ran(
        store.replace(MAX_SAFE - 1, item('edge'), UNCONDITIONAL, undefined, UNBOUNDED_WORK),
      );
      assert.deepEqual(await ran(store.create(item('last'), undefined, UNBOUNDED_WORK)), {
        kind: 'created',
        id: MAX_SAFE,
        version: (await store.get(MAX_SAFE, UNBOUNDED_WORK))?.version,
      });
      assert.deepEqual(await ran(store.create(item('past'), undefined, UNBOUNDED_WORK)), {
        kind: 'no-id-left',
      });
      assert.deepEqual(dataOf(await store.get(MAX_SAFE, UNBOUNDED_WORK)), {
        id: MAX_SAFE,
        title: 'last',
        done: false,
      });
      await reopen();
      assert.deepEqual(await ran(store.create(item('past, reopened'), undefined, UNBOUNDED_WORK)), {
        kind: 'no-id-left',
      });
      await ran(store.remove(MAX_SAFE, UNCONDITIONAL, undefined, UNBOUNDED_WORK));
      assert.equal(
        (await createTodo(store, item('freed'))).id,
        MAX_SAFE,
        'the largest id is free again once its item is gone',
      );
    });

    test('a keyed create with no id left records that outcome: its key replays it, even once an id is free', async () => {
      await ran(store.replace(MAX_SAFE, item('edge'), UNCONDITIONAL, undefined, UNBOUNDED_WORK));
      const outcome = { kind: 'no-id-left' };
      assert.deepEqual(await store.create(item('past'), keyedWrite('k', 1_000), UNBOUNDED_WORK), {
        kind: 'ran',
        outcome,
      });
      await ran(store.remove(MAX_SAFE, UNCONDITIONAL, undefined, UNBOUNDED_WORK));
      assert.deepEqual(await store.create(item('past'), keyedWrite('k', 2_000), UNBOUNDED_WORK), {
        kind: 'recorded',
        fingerprint: 'fp-k',
        outcome,
        recordedAtMs: 1_000,
      });
      assert.equal(await store.get(2, UNBOUNDED_WORK), undefined);
    });

    test('creates racing for the last id, keyed and plain: exactly one takes it', async () => {
      await ran(
        store.replace(MAX_SAFE - 1, item('edge'), UNCONDITIONAL, undefined, UNBOUNDED_WORK),
      );
      const outcomes = await Promise.all(
        Array.from({ length: 10 }, (_, i) => [
          ran(store.create(item(`plain ${i}`), undefined, UNBOUNDED_WORK)),
          store.create(item(`keyed ${i}`), keyedWrite(`k${i}`, 1_000), UNBOUNDED_WORK),
        ]).flat(),
      );
      const kinds = outcomes.map((outcome) =>
        'outcome' in outcome ? outcome.outcome.kind : outcome.kind,
      );
      assert.equal(kinds.filter((kind) => kind === 'no-id-left').length, 19);
      assert.equal((await store.get(MAX_SAFE, UNBOUNDED_WORK))?.id, MAX_SAFE);
    });

    test('replace tells a created item from a replaced one', async () => {
      const created = await ran(
        store.replace(7, item('new'), UNCONDITIONAL, undefined, UNBOUNDED_WORK),
      );
      assert.deepEqual(created, {
        kind: 'created',
        todo: { id: 7, title: 'new', done: false, version: versionOf(created) },
      });
      const replaced = await ran(
        store.replace(7, item('again', true), UNCONDITIONAL, undefined, UNBOUNDED_WORK),
      );
      assert.deepEqual(replaced, {
        kind: 'replaced',
        todo: { id: 7, title: 'again', done: true, version: versionOf(replaced) },
      });
      assert.deepEqual(dataOf(await store.get(7, UNBOUNDED_WORK)), {
        id: 7,
        title: 'again',
        done: true,
      });
    });

    test('replace may set done back to false (a replacement, not a transition)', async () => {
      await ran(store.finish(1, UNCONDITIONAL, undefined, UNBOUNDED_WORK));
      await ran(store.replace(1, item('Buy milk'), UNCONDITIONAL, undefined, UNBOUNDED_WORK));
      assert.deepEqual(dataOf(await store.get(1, UNBOUNDED_WORK)), {
        id: 1,
        title: 'Buy milk',
        done: false,
      });
    });

    test('finish: finished, then already done; missing for an unknown id', async () => {
      const finished = await ran(store.finish(1, UNCONDITIONAL, undefined, UNBOUNDED_WORK));
      assert.deepEqual(finished, {
        kind: 'finished',
        todo: { id: 1, title: 'Buy milk', done: true, version: versionOf(finished) },
      });
      assert.deepEqual(await ran(store.finish(1, UNCONDITIONAL, undefined, UNBOUNDED_WORK)), {
        kind: 'already-done',
      });
      assert.deepEqual(await ran(store.finish(99, UNCONDITIONAL, undefined, UNBOUNDED_WORK)), {
        kind: 'missing',
      });
      assert.equal((await store.get(1, UNBOUNDED_WORK))?.done, true);
    });

    test('remove says whether an item was removed', async () => {
      assert.deepEqual(await ran(store.remove(1, UNCONDITIONAL, undefined, UNBOUNDED_WORK)), {
        kind: 'removed',
      });
      assert.deepEqual(await ran(store.remove(1, UNCONDITIONAL, undefined, UNBOUNDED_WORK)), {
        kind: 'missing',
      });
      assert.equal(await store.get(1, UNBOUNDED_WORK), undefined);
    });

    test('titles with NUL, lone surrogates, emoji and quotes round-trip exactly', async () => {
      const titles = ['a\u0000b', '\ud800', 'x\udfffy', '🥛 milk', 'say "hi"\\', '', '\u2028\n\t'];
      for (const title of titles) {
        const { id } = await createTodo(store, item(title));
        assert.equal(typeof id, 'number');
        assert.deepEqual(dataOf(await store.get(id, UNBOUNDED_WORK)), {
          id,
          title,
          done: false,
        });
      }
      await ran(store.replace(50, item('\ud83d'), UNCONDITIONAL, undefined, UNBOUNDED_WORK));
      const finished = await ran(store.finish(50, UNCONDITIONAL, undefined, UNBOUNDED_WORK));
      assert.deepEqual(finished, {
        kind: 'finished',
        todo: { id: 50, title: '\ud83d', done: true, version: versionOf(finished) },
      });
    });

    test('data survives closing and reopening', async () => {
      await createTodo(store, item('kept', true));
      await reopen();
      assert.deepEqual(dataOf(await store.get(2, UNBOUNDED_WORK)), {
        id: 2,
        title: 'kept',
        done: true,
      });
    });

    test('initial data goes only into an empty database: a deleted item 1 does not come back', async () => {
      await ran(store.remove(1, UNCONDITIONAL, undefined, UNBOUNDED_WORK));
      await reopen();
      assert.equal(await store.get(1, UNBOUNDED_WORK), undefined);
      assert.equal((await createTodo(store, item('first again'))).id, 1);
    });

    test('concurrent creates each take largest + 1: distinct, consecutive ids', async () => {
      const created = await Promise.all(
        Array.from({ length: 60 }, (_, i) => createTodo(store, item(`c${i}`))),
      );
      const ids = created.map((todo) => todo.id).sort((a, b) => a - b);
      assert.deepEqual(
        ids,
        Array.from({ length: 60 }, (_, i) => i + 2),
      );
    });

    test('concurrent creates and replaces of new ids never share an id', async () => {
      // PUT targets lie far apart, so that no POST can legitimately reach one by counting up.
      const work = Array.from({ length: 80 }, (_, i) =>
        i % 4 === 0
          ? ran(
              store.replace(
                1000 * (i + 1),
                item(`put${i}`),
                UNCONDITIONAL,
                undefined,
                UNBOUNDED_WORK,
              ),
            ).then((r) => ({
              id: 1000 * (i + 1),
              title: `put${i}`,
              created: r.kind === 'created',
            }))
          : createTodo(store, item(`post${i}`)).then((todo) => ({
              id: todo.id,
              title: todo.title,
              created: true,
            })),
      );
      const done = await Promise.all(work);
      assert.equal(new Set(done.map((todo) => todo.id)).size, done.length);
      assert.ok(done.every((todo) => todo.created));
      for (const todo of done)
        assert.equal((await store.get(todo.id, UNBOUNDED_WORK))?.title, todo.title);
    });

    test('concurrent finishes of one item: exactly one finishes it', async () => {
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, () =>
          ran(store.finish(1, UNCONDITIONAL, undefined, UNBOUNDED_WORK)),
        ),
      );
      assert.equal(outcomes.filter((o) => o.kind === 'finished').length, 1);
      assert.equal(outcomes.filter((o) => o.kind === 'already-done').length, 19);
    });

    test('finishes racing with replaces of the same item finish each replaced version at most once', async () => {
      // Each replace writes a new title with done = false; a finish that reports "finished" names
      // the version it finished. Two finishes of one version mean one of them decided on a stale
      // read.
      await ran(
        store.replace(
          7,
          { title: 'round start', done: true },
          UNCONDITIONAL,
          undefined,
          UNBOUNDED_WORK,
        ),
      );
      const work: Promise<unknown>[] = [];
      for (let i = 0; i < 30; i++) {
        work.push(
          ran(
            store.replace(
              7,
              { title: `round ${i}`, done: false },
              UNCONDITIONAL,
              undefined,
              UNBOUNDED_WORK,
            ),
          ),
        );
        work.push(
          ran(store.finish(7, UNCONDITIONAL, undefined, UNBOUNDED_WORK)),
          ran(store.finish(7, UNCONDITIONAL, undefined, UNBOUNDED_WORK)),
        );
      }
      const outcomes = (await Promise.all(work)).filter((_, i) => i % 3 !== 0) as FinishOutcome[];
      const finishedTitles = outcomes.flatMap((o) => (o.kind === 'finished' ? [o.todo.title] : []));
      assert.equal(
        new Set(finishedTitles).size,
        finishedTitles.length,
        `a version finished twice: ${finishedTitles.join(', ')}`,
      );
      assert.deepEqual(
        outcomes.filter((o) => o.kind !== 'finished'),
        Array.from({ length: outcomes.length - finishedTitles.length }, () => ({
          kind: 'already-done',
        })),
      );
      for (const o of outcomes)
        if (o.kind === 'finished')
          assert.deepEqual(dataOf(o.todo), { id: 7, title: o.todo.title, done: true });
    });

    test('a create under a new key creates the item once and records its outcome; the key then replays that record', async () => {
      const todo = { id: 2, title: 'a "quoted" \u0000 💡', done: true };
      const first = await store.create(
        item(todo.title, true),
        keyedWrite('k', 1_000),
        UNBOUNDED_WORK,
      );
      const outcome = {
        kind: 'created',
        id: 2,
        version: (await store.get(2, UNBOUNDED_WORK))?.version,
      };
      assert.deepEqual(first, { kind: 'ran', outcome });
      assert.deepEqual(await store.create(item('other'), keyedWrite('k', 2_000), UNBOUNDED_WORK), {
        kind: 'recorded',
        fingerprint: 'fp-k',
        outcome,
        recordedAtMs: 1_000,
      });
      assert.deepEqual(dataOf(await store.get(2, UNBOUNDED_WORK)), todo);
      assert.equal(await store.get(3, UNBOUNDED_WORK), undefined);
    });

    test('keyed and plain creates at once never share an id: all 40 are stored, with ids 2 to 41', async () => {
      await Promise.all(
        Array.from({ length: 20 }, (_, i) => [
          createTodo(store, item(`plain ${i}`)),
          store.create(item(`keyed ${i}`), keyedWrite(`k${i}`, 1_000), UNBOUNDED_WORK),
        ]).flat(),
      );
      const stored = await Promise.all(
        Array.from({ length: 40 }, (_, i) => store.get(i + 2, UNBOUNDED_WORK)),
      );
      assert.equal(new Set(stored.map((todo) => todo?.title)).size, 40);
      assert.ok(stored.every((todo) => todo !== undefined));
    });

    test('a create under a key recorded before expiredBeforeMs: the key is absent, so the item is created again', async () => {
      await assertExpiredKeyRunsAgain((key) => store.create(item('again'), key, UNBOUNDED_WORK));
      assert.deepEqual(
        [dataOf(await store.get(2, UNBOUNDED_WORK)), dataOf(await store.get(3, UNBOUNDED_WORK))],
        [
          { id: 2, title: 'again', done: false },
          { id: 3, title: 'again', done: false },
        ],
      );
    });

    test('the store prunes expired key records in the background, every quarter of their time to live (at least a second)', async () => {
      await store.close();
      store = await openTodoStore(fresh.db, { idempotencyTtlMs: 2_000 });
      const old = Date.now() - 10_000;
      assert.equal(
        (await store.create(item('old'), keyedWrite('old', old), UNBOUNDED_WORK)).kind,
        'ran',
      );
      assert.equal(
        (await store.create(item('old'), keyedWrite('old', Date.now()), UNBOUNDED_WORK)).kind,
        'recorded',
        'kept until pruned, for a lookup that allows it',
      );
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      assert.equal(
        (await store.create(item('old'), keyedWrite('old', Date.now()), UNBOUNDED_WORK)).kind,
        'ran',
        'pruned: the key runs again',
      );
    });

    test('pruneKeys deletes the key records from before its bound, and only those', async () => {
      await assertPrunesBefore(
        (key) => store.create(item('kept'), key, UNBOUNDED_WORK),
        (before) => store.pruneKeys(before),
      );
    });

    test('a batch of writes carries at most 4 MiB: creates of large titles (3 bytes a UTF-16 unit) go at most three a batch', async () => {
      const recorder = recordBatches();
      await store.close();
      store = await openTodoStore(fresh.db, { observer: recorder.observer });
      const title = 'é'.repeat(LARGE);
      const created = await Promise.all(
        Array.from({ length: 7 }, () => createTodo(store, item(title))),
      );
      assert.deepEqual(
        created.map((todo) => todo.id),
        [2, 3, 4, 5, 6, 7, 8],
      );
      assertCutByBytes(recorder.batches, 7);
    });

    test('ping answers true while open', async () => {
      assert.equal(await store.ping(), true);
    });
  });
}
