// The SQLite store scaffold (src/db/sqlite/store.ts) on `:memory:`, where writes run in this
// thread: each write is its own transaction, a database fault is translated and changes readiness,
// and while writes fail the readiness check probes with a write until they work again. The
// read-only fault is SQLite's own (PRAGMA query_only), not a stand-in.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { isStoreFault, type StoreFault } from '../../src/db/store-errors.js';
import { openSqliteStore, type SqliteStore } from '../../src/db/sqlite/store.js';
import { stateless } from '../../src/db/sqlite/batch-writes.js';
import { createLogger } from '../../src/observe/log.js';
import { UNBOUNDED_WORK } from '../../src/common/work.js';
import { ran } from '../support/keys.js';

/** Insert a value; `then-fail` inserts and then throws, so its transaction must undo the insert. */
type Op = { readonly insert: number; readonly thenFail?: boolean };

describe('a SQLite store on :memory:', () => {
  let store: SqliteStore<Op, number>;
  let faults: StoreFault[];
  let lines: string[];

  beforeEach(async () => {
    faults = [];
    lines = [];
    store = await openSqliteStore<Op, number, number>({
      location: ':memory:',
      service: 'memory-test',
      migrations: [{ version: 1, sql: 'CREATE TABLE v (x INTEGER NOT NULL)' }],
      seed: (db) => void db.prepare('INSERT INTO v (x) VALUES (0)').run(),
      writes: {
        prepare: (db) => {
          const insert = db.prepare<[number]>('INSERT INTO v (x) VALUES (?)');
          return stateless((op: Op) => {
            insert.run(op.insert);
            if (op.thenFail === true) throw new Error(`write ${op.insert} failed after its insert`);
            return op.insert;
          });
        },
        outcome: (_op, value) => value,
      },
      sizeOf: () => 8,
      writerScript: new URL('./unused-in-memory.js', import.meta.url),
      observer: { fault: (fault) => faults.push(fault) },
      log: createLogger('info', (line) => lines.push((JSON.parse(line) as { msg: string }).msg)),
    });
  });
  afterEach(() => store.close());

  const values = (): number[] =>
    store.read(() =>
      store.db
        .prepare<[], { x: number }>('SELECT x FROM v ORDER BY rowid')
        .all()
        .map((row) => row.x),
    );

  test('each write is its own transaction: one that fails undoes only itself', async () => {
    assert.equal(await ran(store.write({ insert: 1 }, undefined, UNBOUNDED_WORK)), 1);
    await assert.rejects(
      ran(store.write({ insert: 2, thenFail: true }, undefined, UNBOUNDED_WORK)),
      /write 2 failed after its insert/,
    );
    assert.equal(await ran(store.write({ insert: 3 }, undefined, UNBOUNDED_WORK)), 3);
    assert.deepEqual(values(), [0, 1, 3]);
    assert.deepEqual(faults, [], 'a failure that is no database fault is not one');
    assert.equal(await store.ready(), true);
  });

  test('writes refused as read-only: the store error, not ready while the probe write fails, ready once it succeeds; reads go on', async () => {
    store.db.pragma('query_only = ON');
    await assert.rejects(
      ran(store.write({ insert: 1 }, undefined, UNBOUNDED_WORK)),
      (error: unknown) => isStoreFault(error, 'read-only'),
    );
    assert.deepEqual(faults, ['read-only']);
    assert.deepEqual(values(), [0]);
    const busyTimeout = (): unknown => store.db.pragma('busy_timeout', { simple: true });
    const waitsForLocks = busyTimeout();
    assert.equal(waitsForLocks, 5000);
    assert.equal(await store.ready(), false);
    assert.equal(
      busyTimeout(),
      waitsForLocks,
      'the probe, which does not wait for the lock, gives the wait back when it fails',
    );
    assert.equal(await store.ready(), false, 'still refused: still not ready');
    store.db.pragma('query_only = OFF');
    assert.equal(await store.ready(), true);
    assert.equal(busyTimeout(), waitsForLocks, 'and when it succeeds');
    assert.equal(await ran(store.write({ insert: 4 }, undefined, UNBOUNDED_WORK)), 4);
    assert.deepEqual(values(), [0, 4], 'the probe left nothing behind');
  });

  test('a write that goes through after writes were refused says at once that writes work again', async () => {
    store.db.pragma('query_only = ON');
    await assert.rejects(
      ran(store.write({ insert: 1 }, undefined, UNBOUNDED_WORK)),
      (error: unknown) => isStoreFault(error, 'read-only'),
    );
    store.db.pragma('query_only = OFF');
    assert.equal(await ran(store.write({ insert: 2 }, undefined, UNBOUNDED_WORK)), 2);
    assert.deepEqual(
      lines.filter((line) => /writes/.test(line)),
      [
        'database refuses writes (read-only): writes answer 503 and not ready until one succeeds',
        'database takes writes again',
      ],
    );
  });

  test('a store found corrupt stays not ready, even once a probe write goes through', async () => {
    const malformed = Object.assign(new Error('database disk image is malformed'), {
      code: 'SQLITE_CORRUPT',
    });
    assert.throws(
      () =>
        store.read(() => {
          throw malformed;
        }),
      (error: unknown) => isStoreFault(error, 'corrupt'),
    );
    store.db.pragma('query_only = ON');
    await assert.rejects(
      ran(store.write({ insert: 1 }, undefined, UNBOUNDED_WORK)),
      (error: unknown) => isStoreFault(error, 'read-only'),
    );
    store.db.pragma('query_only = OFF');
    assert.equal(await store.ready(), false);
    assert.deepEqual(faults, ['corrupt', 'read-only']);
  });

  test('a read that meets a database fault throws the store error and tells it; a bug stays itself', async () => {
    const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    const failing = (error: Error) => (): never => {
      throw error;
    };
    assert.throws(
      () => store.read(failing(busy)),
      (error: unknown) => isStoreFault(error, 'busy') && error.cause === busy,
    );
    const bug = new TypeError('a bug');
    assert.throws(
      () => store.read(failing(bug)),
      (error: unknown) => error === bug,
    );
    assert.deepEqual(faults, ['busy']);
    assert.deepEqual(values(), [0]);
    assert.equal(await store.ready(), true);
  });

  test('a closed store is not ready', async () => {
    await store.close();
    assert.equal(await store.ready(), false);
  });
});
