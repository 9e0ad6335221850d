// PostgreSQL finish under contention: finishes from several instances that all wait for the item
// at once still finish it exactly once. A row lock held elsewhere makes every finish wait at the
// same point, so the race is certain rather than left to timing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import type { TodoStore } from '../../src/todo/store.js';
import { openPostgresTodoStore } from '../../src/todo/store-postgres.js';
import { createTestDatabase, postgresSkip } from '../support/postgres.js';
import { suiteUnless } from '../support/suite.js';
import { dataOf } from '../support/todos.js';
import { UNBOUNDED_WORK } from '../../src/common/work.js';
import { UNCONDITIONAL } from '../../src/todo/write-conditions.js';
import { ran } from '../support/keys.js';

const INSTANCES = 4;

suiteUnless(await postgresSkip(), 'PostgreSQL to-do finish under contention', () => {
  test(`finishes from ${INSTANCES} instances waiting on one locked item: exactly one finishes it, the others find it done`, async () => {
    const database = await createTestDatabase();
    const stores: TodoStore[] = [];
    const blocker = new pg.Client({ connectionString: database.url });
    await blocker.connect();
    try {
      for (let i = 0; i < INSTANCES; i++) stores.push(await openPostgresTodoStore(database.url));
      // Each instance's connection is open before the race: every finish must be waiting well
      // within the statement time-out, which also bounds a lock wait.
      await Promise.all(stores.map((store) => store.get(1, UNBOUNDED_WORK)));
      // Lock the row without changing it, as a concurrent PUT would mid-transaction.
      await blocker.query('BEGIN');
      await blocker.query('SELECT id FROM todos WHERE id = 1 FOR UPDATE');
      let answered = false;
      const outcomes = Promise.all(
        stores.map((store) => ran(store.finish(1, UNCONDITIONAL, undefined, UNBOUNDED_WORK))),
      ).finally(() => (answered = true));
      await waitForLockWaiters(blocker, INSTANCES, () => answered);
      await blocker.query('COMMIT');
      const settled = await outcomes;
      assert.deepEqual(
        settled.flatMap((o) => (o.kind === 'finished' ? [dataOf(o.todo)] : [])),
        [{ id: 1, title: 'Buy milk', done: true }],
      );
      assert.deepEqual(
        settled.filter((o) => o.kind !== 'finished'),
        Array.from({ length: INSTANCES - 1 }, () => ({ kind: 'already-done' })),
      );
    } finally {
      await blocker.end();
      await Promise.all(stores.map((store) => store.close()));
      await database.drop();
    }
  });
});

/** Resolves once `count` other sessions of this database wait for a lock, or the finishes were answered anyway. */
async function waitForLockWaiters(
  client: pg.Client,
  count: number,
  answered: () => boolean,
): Promise<void> {
  // pg_stat_activity is a view, not an event source: poll it, each query a round trip apart.
  while (!answered()) {
    const { rows } = await client.query<{ waiting: number }>(
      `SELECT count(*)::int AS waiting FROM pg_stat_activity
       WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'`,
    );
    if ((rows[0]?.waiting ?? 0) >= count) return;
  }
}
