// The migration runner (src/db/migrations.ts) on a real SQLite file: which steps a database gets,
// in which order, when it is seeded, and which databases and migration lists it refuses.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { WRITE_PROBE_STATEMENTS, type Migration } from '../../src/db/migrations.js';
import { openSqlite } from '../../src/db/sqlite/sqlite.js';
import { isStoreFault } from '../../src/db/store-errors.js';

const dir = mkdtempSync(join(tmpdir(), 'migrations-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshFile = (): string => join(dir, `db-${++files}.sqlite`);

/** Step n creates table tn; a later step also writes into the table of the step before it, so it fails if run first. */
const step = (version: number): Migration => ({
  version,
  sql: `CREATE TABLE t${version} (x INTEGER)${version > 1 ? `; INSERT INTO t${version - 1} (x) VALUES (${version})` : ''}`,
});

/** Opens `location` with these steps for `service`, and closes it; how many times it was seeded. */
async function migrate(
  location: string,
  migrations: readonly Migration[],
  service = 'svc',
): Promise<number> {
  let seeded = 0;
  const db = await openSqlite({ location, service, migrations, seed: () => void (seeded += 1) });
  db.close();
  return seeded;
}

function read<Row>(location: string, sql: string): Row[] {
  const db = new Database(location, { readonly: true });
  try {
    return db.prepare<[], Row>(sql).all();
  } finally {
    db.close();
  }
}

/** Runs `body` while another connection holds the file's write lock (as a writer mid-commit does). */
async function whileWriteLockHeld(location: string, body: () => Promise<void>): Promise<void> {
  const writer = new Database(location);
  writer.exec('BEGIN IMMEDIATE');
  try {
    await body();
  } finally {
    writer.exec('ROLLBACK');
    writer.close();
  }
}

const applied = (location: string): string[] =>
  read<{ service: string; version: number }>(
    location,
    'SELECT service, version FROM schema_migrations ORDER BY service, version',
  ).map((row) => `${row.service} ${row.version}`);

describe('migrations', () => {
  test('a new database gets every step in version order, whatever order they are listed in, and is seeded once', async () => {
    const file = freshFile();
    assert.equal(await migrate(file, [step(3), step(1), step(4), step(2)]), 1);
    assert.deepEqual(applied(file), ['svc 1', 'svc 2', 'svc 3', 'svc 4']);
    assert.deepEqual(read(file, 'SELECT x FROM t3'), [{ x: 4 }]);
  });

  test('reopening an up-to-date database runs no step and seeds nothing', async () => {
    const file = freshFile();
    await migrate(file, [step(1), step(2)]);
    assert.equal(await migrate(file, [step(1), step(2)]), 0);
    assert.deepEqual(applied(file), ['svc 1', 'svc 2']);
    assert.deepEqual(read(file, 'SELECT x FROM t1'), [{ x: 2 }], 'step 2 ran once');
  });

  test('an up-to-date database opens without taking the write lock: a writer holding it does not delay the start', async () => {
    const file = freshFile();
    await migrate(file, [step(1)]);
    await whileWriteLockHeld(file, async () => {
      const db = await openSqlite({
        location: file,
        service: 'svc',
        migrations: [step(1)],
        seed: () => undefined,
        busyTimeoutMs: 0,
      });
      db.close();
    });
  });

  test('a database that needs a step waits for the write lock, and a lock held past the busy timeout fails the start as busy', async () => {
    const file = freshFile();
    await migrate(file, [step(1)]);
    await whileWriteLockHeld(file, () =>
      assert.rejects(
        openSqlite({
          location: file,
          service: 'svc',
          migrations: [step(1), step(2)],
          seed: () => undefined,
          busyTimeoutMs: 0,
        }),
        (error: unknown) => isStoreFault(error, 'busy'),
      ),
    );
    assert.deepEqual(applied(file), ['svc 1'], 'nothing was applied');
  });

  test('the steps a later build adds are applied on reopen, after those already there, without seeding again', async () => {
    const file = freshFile();
    await migrate(file, [step(1)]);
    assert.equal(await migrate(file, [step(1), step(2), step(3)]), 0);
    assert.deepEqual(applied(file), ['svc 1', 'svc 2', 'svc 3']);
  });

  test('a service with no migration yet still gets schema_migrations and is seeded once', async () => {
    const file = freshFile();
    assert.equal(await migrate(file, []), 1);
    assert.deepEqual(applied(file), []);
  });

  test('two services keep their own versions in one file', async () => {
    const file = freshFile();
    assert.equal(await migrate(file, [step(1)], 'a'), 1);
    assert.equal(
      await migrate(
        file,
        [
          { version: 1, sql: 'CREATE TABLE b1 (x INTEGER)' },
          { version: 2, sql: 'CREATE TABLE b2 (x INTEGER)' },
        ],
        'b',
      ),
      1,
    );
    assert.equal(await migrate(file, [step(1), step(2)], 'a'), 0);
    assert.deepEqual(applied(file), ['a 1', 'a 2', 'b 1', 'b 2']);
  });

  test('a database a newer build migrated (a version above the newest known) refuses to open, naming both versions', async () => {
    const file = freshFile();
    await migrate(file, [step(1), step(2)]);
    await assert.rejects(migrate(file, [step(1)]), {
      code: 'MIGRATION_FAILED',
      message: 'the svc schema is at version 2, newer than this build knows (1): run a newer build',
    });
    assert.deepEqual(applied(file), ['svc 1', 'svc 2']);
  });

  for (const [versions, found] of [
    [[0], '0'],
    [[1, -1], '-1'],
    [[1, 1.5], '1.5'],
    [[1, 2, 2], '2'],
    [[2, 1, 3, 1], '1'],
  ] as const) {
    test(`migration versions must be distinct positive integers: ${versions.join(', ')} is refused, and nothing is written`, async () => {
      const file = freshFile();
      await assert.rejects(
        migrate(
          file,
          versions.map((version, i) => ({ version, sql: `CREATE TABLE v${i} (x INTEGER)` })),
        ),
        {
          code: 'MIGRATION_FAILED',
          message: `migration versions must be distinct positive integers (found ${found})`,
        },
      );
      assert.deepEqual(read(file, "SELECT name FROM sqlite_schema WHERE type = 'table'"), []);
    });
  }

  test('the write probe writes (each statement fails on a read-only connection) and leaves schema_migrations as it was', async () => {
    const file = freshFile();
    await migrate(file, [step(1)]);
    const readOnly = new Database(file, { readonly: true });
    try {
      assert.equal(WRITE_PROBE_STATEMENTS.length, 2);
      for (const statement of WRITE_PROBE_STATEMENTS)
        assert.throws(() => readOnly.exec(statement), { code: 'SQLITE_READONLY' }, statement);
    } finally {
      readOnly.close();
    }
    const writable = new Database(file);
    try {
      writable.transaction(() => {
        for (const statement of WRITE_PROBE_STATEMENTS) writable.exec(statement);
      })();
    } finally {
      writable.close();
    }
    assert.deepEqual(applied(file), ['svc 1']);
  });
});
