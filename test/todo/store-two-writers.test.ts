// Two to-do stores writing one SQLite file, each with its own writer thread and connection, as two
// server processes on one file would: each batch reads the revision counter and the largest id
// under SQLite's write lock and writes the counter back before COMMIT, so the other writer's
// batches, taken between, never see a stale value.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import { openSqliteTodoStore } from '../../src/todo/store-sqlite.js';
import type { TodoStore } from '../../src/todo/store.js';
import { UNBOUNDED_WORK } from '../../src/common/work.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';
import { ran } from '../support/keys.js';

const dir = mkdtempSync(join(tmpdir(), 'todo-two-writers-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function create(store: TodoStore, title: string): Promise<{ id: number; version: number }> {
  const outcome = await ran(store.create({ title, done: false }, undefined, UNBOUNDED_WORK));
  assert.ok(outcome.kind === 'created' && outcome.version !== undefined, 'no id left');
  return { id: outcome.id, version: outcome.version };
}

const range = (from: number, count: number): number[] =>
  Array.from({ length: count }, (_, i) => from + i);

test(
  'creates from two writers on one file, batched in each, take consecutive ids and versions, each once',
  { timeout: SUITE_TIMEOUT_MS },
  async () => {
    const file = join(dir, 'todo.sqlite');
    const first = await openSqliteTodoStore(file);
    const second = await openSqliteTodoStore(file);
    try {
      // Each round sends a batch to each writer at once; the two batches take the lock in turn.
      const created: { id: number; version: number }[] = [];
      for (let round = 0; round < 5; round += 1) {
        const writes = range(0, 10).flatMap((i) => [
          create(first, `first ${round}.${i}`),
          create(second, `second ${round}.${i}`),
        ]);
        created.push(...(await Promise.all(writes)));
      }
      // Only creates ran after the seeded item (id 1, version 1): each took the next id and the
      // next version together.
      for (const { id, version } of created) assert.equal(version, id);
      assert.deepEqual(
        created.map((c) => c.id).sort((a, b) => a - b),
        range(2, 100),
      );
      for (const store of [first, second])
        for (const { id, version } of created)
          assert.equal((await store.get(id, UNBOUNDED_WORK))?.version, version);
    } finally {
      await first.close();
      await second.close();
    }
    const db = new Database(file, { readonly: true });
    try {
      assert.equal(db.prepare('SELECT last FROM todo_revision').pluck(true).get(), 101);
    } finally {
      db.close();
    }
  },
);
