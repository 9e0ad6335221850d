// The to-do store's versions and conditional writes, on every backend: every write gives its item a
// version no state of any item had before (so a tag never repeats at one URL, even when an id is
// used again), versions survive a restart, and a write's condition is judged with the write.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { openTodoStore } from '../../src/todo/service.js';
import type { StoredTodo, TodoStore } from '../../src/todo/store.js';
import { TODO_POSTGRES_MIGRATIONS } from '../../src/todo/store-postgres-migrations.js';
import { TODO_MIGRATIONS } from '../../src/todo/store-sqlite-schema.js';
import {
  UNCONDITIONAL,
  type VersionSet,
  type WriteCondition,
} from '../../src/todo/write-conditions.js';
import { keyedWrite, ran } from '../support/keys.js';
import { runPlainSql } from '../support/plain-sql.js';
import { storeBackends, type FreshDatabase } from '../support/store-backends.js';
import { suiteUnless } from '../support/suite.js';
import { UNBOUNDED_WORK } from '../../src/common/work.js';

const item = (title: string, done = false) => ({ title, done });
const ifMatch = (versions: VersionSet): WriteCondition => ({
  kind: 'versions',
  ifMatch: versions,
  ifNoneMatch: undefined,
});
const ifNoneMatch = (versions: VersionSet): WriteCondition => ({
  kind: 'versions',
  ifMatch: undefined,
  ifNoneMatch: versions,
});
const REQUIRED: WriteCondition = { kind: 'required' };

/** The last schema version of each backend before versions. */
const BEFORE_VERSIONS = { sqlite: 3, postgres: 6 } as const;

async function current(store: TodoStore, id: number): Promise<StoredTodo> {
  const todo = await store.get(id, UNBOUNDED_WORK);
  assert.ok(todo !== undefined, `item ${id} exists`);
  return todo;
}

for (const backend of await storeBackends()) {
  suiteUnless(backend.skip, `to-do versions and conditional writes on ${backend.name}`, () => {
    let fresh: FreshDatabase;
    let store: TodoStore;
    beforeEach(async () => {
      fresh = await backend.fresh();
      store = await openTodoStore(fresh.db);
    });
    afterEach(async () => {
      await store.close();
      await fresh.drop();
    });

    test('every kind of write gives its item a new version, above every version before', async () => {
      const seen = [(await current(store, 1)).version];
      const created = await ran(store.create(item('two'), undefined, UNBOUNDED_WORK));
      assert.ok(created.kind === 'created' && created.version !== undefined);
      seen.push(created.version);
      const keyed = await store.create(item('three'), keyedWrite('k', Date.now()), UNBOUNDED_WORK);
      assert.ok(
        keyed.kind === 'ran' &&
          keyed.outcome.kind === 'created' &&
          keyed.outcome.version !== undefined,
      );
      seen.push(keyed.outcome.version);
      for (const outcome of [
        await ran(store.replace(1, item('one'), UNCONDITIONAL, undefined, UNBOUNDED_WORK)),
        await ran(store.replace(9, item('nine'), UNCONDITIONAL, undefined, UNBOUNDED_WORK)),
        await ran(store.finish(1, UNCONDITIONAL, undefined, UNBOUNDED_WORK)),
      ]) {
        assert.ok('todo' in outcome, outcome.kind);
        seen.push(outcome.todo.version);
      }
      assert.deepEqual(
        seen,
        [...seen].sort((a, b) => a - b),
      );
      assert.equal(new Set(seen).size, seen.length);
      assert.equal(
        (await current(store, 1)).version,
        seen.at(-1),
        'a read shows the version of the last write',
      );
    });

    test('an id used again after a delete never gets a version it had before', async () => {
      const created = await ran(store.create(item('two'), undefined, UNBOUNDED_WORK));
      assert.ok(created.kind === 'created');
      const before = (await current(store, 2)).version;
      await ran(store.remove(2, UNCONDITIONAL, undefined, UNBOUNDED_WORK));
      const again = await ran(store.create(item('two again'), undefined, UNBOUNDED_WORK));
      assert.ok(again.kind === 'created' && again.id === 2, 'the create took id 2 again');
      assert.notEqual((await current(store, 2)).version, before);
      assert.deepEqual(
        await ran(store.replace(2, item('stale'), ifMatch([before]), undefined, UNBOUNDED_WORK)),
        {
          kind: 'stale',
        },
      );
    });

    test('versions survive closing and reopening, and the counter goes on above them', async () => {
      await ran(store.replace(1, item('changed'), UNCONDITIONAL, undefined, UNBOUNDED_WORK));
      const kept = (await current(store, 1)).version;
      await store.close();
      store = await openTodoStore(fresh.db);
      assert.equal((await current(store, 1)).version, kept);
      const next = await ran(
        store.replace(5, item('five'), UNCONDITIONAL, undefined, UNBOUNDED_WORK),
      );
      assert.ok(next.kind === 'created' && next.todo.version > kept);
    });

    test('replace with If-Match: the current version replaces; another, or any on an absent item, changes nothing', async () => {
      const { version } = await current(store, 1);
      assert.deepEqual(
        await ran(
          store.replace(1, item('stale'), ifMatch([version + 100]), undefined, UNBOUNDED_WORK),
        ),
        {
          kind: 'stale',
        },
      );
      assert.deepEqual(
        await ran(store.replace(1, item('stale'), ifMatch([]), undefined, UNBOUNDED_WORK)),
        {
          kind: 'stale',
        },
      );
      assert.equal((await current(store, 1)).title, 'Buy milk');
      assert.deepEqual(
        await ran(store.replace(5, item('absent'), ifMatch('any'), undefined, UNBOUNDED_WORK)),
        {
          kind: 'stale',
        },
      );
      assert.equal(await store.get(5, UNBOUNDED_WORK), undefined);
      const replaced = await ran(
        store.replace(1, item('fresh'), ifMatch([version - 1, version]), undefined, UNBOUNDED_WORK),
      );
      assert.equal(replaced.kind, 'replaced');
      assert.equal((await current(store, 1)).title, 'fresh');
      assert.equal(
        (await ran(store.replace(1, item('any'), ifMatch('any'), undefined, UNBOUNDED_WORK))).kind,
        'replaced',
      );
    });

    test('replace with If-None-Match: * creates only an absent item; a listed version refuses only that version', async () => {
      assert.deepEqual(
        await ran(store.replace(1, item('clash'), ifNoneMatch('any'), undefined, UNBOUNDED_WORK)),
        {
          kind: 'stale',
        },
      );
      assert.equal(
        (await ran(store.replace(5, item('new'), ifNoneMatch('any'), undefined, UNBOUNDED_WORK)))
          .kind,
        'created',
      );
      const { version } = await current(store, 1);
      assert.deepEqual(
        await ran(
          store.replace(1, item('refused'), ifNoneMatch([version]), undefined, UNBOUNDED_WORK),
        ),
        {
          kind: 'stale',
        },
      );
      assert.equal(
        (
          await ran(
            store.replace(
              1,
              item('other'),
              ifNoneMatch([version + 100]),
              undefined,
              UNBOUNDED_WORK,
            ),
          )
        ).kind,
        'replaced',
      );
    });

    test('a refused replace takes no version: the next write takes the one after the last write', async () => {
      const { version } = await current(store, 1);
      const first = await ran(
        store.replace(1, item('first'), ifMatch([version]), undefined, UNBOUNDED_WORK),
      );
      assert.equal(first.kind, 'replaced');
      const written = first.kind === 'replaced' ? first.todo.version : 0;
      assert.deepEqual(
        await ran(store.replace(1, item('stale'), ifMatch([version]), undefined, UNBOUNDED_WORK)),
        {
          kind: 'stale',
        },
      );
      assert.deepEqual(
        await ran(store.replace(5, item('absent'), ifMatch('any'), undefined, UNBOUNDED_WORK)),
        {
          kind: 'stale',
        },
      );
      assert.deepEqual(
        await ran(store.replace(1, item('exists'), ifNoneMatch('any'), undefined, UNBOUNDED_WORK)),
        {
          kind: 'stale',
        },
      );
      assert.deepEqual(
        await ran(store.replace(1, item('blind'), REQUIRED, undefined, UNBOUNDED_WORK)),
        {
          kind: 'version-required',
        },
      );
      const next = await ran(
        store.replace(1, item('next'), ifMatch('any'), undefined, UNBOUNDED_WORK),
      );
      assert.equal(next.kind === 'replaced' ? next.todo.version : 0, written + 1);
    });

    test('a required version: an existing item is refused without one, an absent one is created', async () => {
      assert.deepEqual(
        await ran(store.replace(1, item('blind'), REQUIRED, undefined, UNBOUNDED_WORK)),
        {
          kind: 'version-required',
        },
      );
      assert.deepEqual(await ran(store.remove(1, REQUIRED, undefined, UNBOUNDED_WORK)), {
        kind: 'version-required',
      });
      assert.equal((await current(store, 1)).title, 'Buy milk');
      assert.equal(
        (await ran(store.replace(5, item('new'), REQUIRED, undefined, UNBOUNDED_WORK))).kind,
        'created',
      );
      assert.deepEqual(await ran(store.remove(6, REQUIRED, undefined, UNBOUNDED_WORK)), {
        kind: 'missing',
      });
    });

    test('remove with If-Match: missing comes first; a stale version keeps the item; the current one removes it', async () => {
      const { version } = await current(store, 1);
      assert.deepEqual(await ran(store.remove(9, ifMatch('any'), undefined, UNBOUNDED_WORK)), {
        kind: 'missing',
      });
      assert.deepEqual(
        await ran(store.remove(1, ifMatch([version + 1]), undefined, UNBOUNDED_WORK)),
        {
          kind: 'stale',
        },
      );
      assert.ok((await store.get(1, UNBOUNDED_WORK)) !== undefined);
      assert.deepEqual(await ran(store.remove(1, ifMatch([version]), undefined, UNBOUNDED_WORK)), {
        kind: 'removed',
      });
      assert.equal(await store.get(1, UNBOUNDED_WORK), undefined);
    });

    test('finish with If-Match: missing and already done come first; a stale version leaves it open', async () => {
      const { version } = await current(store, 1);
      assert.deepEqual(await ran(store.finish(9, ifMatch([version]), undefined, UNBOUNDED_WORK)), {
        kind: 'missing',
      });
      assert.deepEqual(
        await ran(store.finish(1, ifMatch([version + 1]), undefined, UNBOUNDED_WORK)),
        {
          kind: 'stale',
        },
      );
      assert.equal((await current(store, 1)).done, false);
      const finished = await ran(store.finish(1, ifMatch([version]), undefined, UNBOUNDED_WORK));
      assert.ok(finished.kind === 'finished' && finished.todo.version > version);
      assert.deepEqual(await ran(store.finish(1, ifMatch([version]), undefined, UNBOUNDED_WORK)), {
        kind: 'already-done',
      });
    });

    test('200 replaces at once with the same version: exactly one is applied, and the item holds its body', async () => {
      const { version } = await current(store, 1);
      const outcomes = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          ran(store.replace(1, item(`writer ${i}`), ifMatch([version]), undefined, UNBOUNDED_WORK)),
        ),
      );
      const winners = outcomes.flatMap((outcome, i) => (outcome.kind === 'replaced' ? [i] : []));
      assert.equal(winners.length, 1);
      assert.equal(outcomes.filter((outcome) => outcome.kind === 'stale').length, 199);
      assert.equal((await current(store, 1)).title, `writer ${winners[0]}`);
    });

    test('a database made before versions opens with a distinct version for each item, and new ones above them', async () => {
      await store.close();
      await fresh.drop();
      fresh = await backend.fresh();
      await buildBeforeVersions(fresh, backend.name);
      store = await openTodoStore(fresh.db);
      const old = await Promise.all([1, 2, 3].map((id) => current(store, id)));
      assert.deepEqual(
        old.map((todo) => todo.title),
        ['one', 'two', 'three'],
      );
      assert.equal(new Set(old.map((todo) => todo.version)).size, 3);
      const written = await ran(
        store.replace(2, item('two, changed'), UNCONDITIONAL, undefined, UNBOUNDED_WORK),
      );
      assert.ok(
        written.kind === 'replaced' &&
          written.todo.version > Math.max(...old.map((todo) => todo.version)),
      );
    });
  });
}

/** A to-do database at the schema version before versions, holding items 1 to 3, made by plain SQL. */
async function buildBeforeVersions(
  fresh: FreshDatabase,
  backend: 'sqlite' | 'postgres',
): Promise<void> {
  const steps = (backend === 'sqlite' ? TODO_MIGRATIONS : TODO_POSTGRES_MIGRATIONS).filter(
    (step) => step.version <= BEFORE_VERSIONS[backend],
  );
  const done = backend === 'sqlite' ? '0' : 'false';
  const statements = [
    'CREATE TABLE IF NOT EXISTS schema_migrations (service TEXT NOT NULL, version INTEGER NOT NULL, PRIMARY KEY (service, version))',
    ...steps.flatMap((step) => [
      step.sql,
      `INSERT INTO schema_migrations (service, version) VALUES ('todo', ${step.version})`,
    ]),
    `INSERT INTO todos (id, title, done) VALUES (1, '"one"', ${done}), (2, '"two"', ${done}), (3, '"three"', ${done})`,
  ];
  await runPlainSql(fresh, statements);
}
