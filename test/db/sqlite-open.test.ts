// Opening a SQLite store's file (src/db/sqlite/sqlite.ts), in this process on real files: the folders are
// made, a damaged file stops the open with the reason, a failed migration leaves nothing behind,
// and the readiness check notices a file deleted under a running store.
import assert from 'node:assert/strict';
import {
  closeSync,
  mkdtempSync,
  openSync,
  rmSync,
  statSync,
  truncateSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { isStoreFault } from '../../src/db/store-errors.js';
import {
  openSqlite,
  QUICK_CHECK_BYTES_MAX,
  sqliteResponds,
  type SqliteDatabase,
} from '../../src/db/sqlite/sqlite.js';
import type { Migration } from '../../src/db/migrations.js';

const dir = mkdtempSync(join(tmpdir(), 'sqlite-open-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshFile = (): string => join(dir, `db-${++files}.sqlite`);

const TABLE: Migration = { version: 1, sql: 'CREATE TABLE t (x TEXT)' };
const open = (
  location: string,
  migrations: readonly Migration[] = [TABLE],
): Promise<SqliteDatabase> =>
  openSqlite({ location, service: 'svc', migrations, seed: () => undefined });

/** A file of table t with 200 rows (after `more`), whose page 4, past the header and the schema, holds noise. */
async function damagedFile(more: (db: SqliteDatabase) => void = () => undefined): Promise<string> {
  const file = freshFile();
  const db = await open(file);
  const insert = db.prepare('INSERT INTO t (x) VALUES (?)');
  for (let i = 0; i < 200; i++) insert.run('x'.repeat(200));
  more(db);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  const fd = openSync(file, 'r+');
  writeSync(fd, Buffer.alloc(4096, 0xa5), 0, 4096, 4 * 4096);
  closeSync(fd);
  return file;
}

describe('opening SQLite', () => {
  test('a new file is created with the folders of its path', async () => {
    const file = join(dir, 'a', 'b', 'c', 'store.sqlite');
    const db = await open(file);
    db.close();
    const check = new Database(file, { readonly: true });
    assert.deepEqual(check.prepare('SELECT version FROM schema_migrations').all(), [
      { version: 1 },
    ]);
    check.close();
  });

  test('a file damaged past its header stops the open with a corrupt-store fault naming what quick_check found', async () => {
    const file = await damagedFile();
    const reader = new Database(file, { readonly: true });
    const finding = (reader.prepare('PRAGMA quick_check(1)').get() as { quick_check: string })
      .quick_check;
    reader.close();
    assert.notEqual(finding, 'ok');
    await assert.rejects(open(file), (error: unknown) => {
      assert.ok(isStoreFault(error, 'corrupt'), String(error));
      assert.equal(error.message, `the database is corrupt: quick_check found "${finding}"`);
      return true;
    });
  });

  test('a file over 64 MiB opens without the whole-file check, so that a large store starts at once: the same damage is not looked for', async () => {
    const file = await damagedFile((db) => {
      db.exec('CREATE TABLE big (b BLOB)');
      db.prepare('INSERT INTO big (b) VALUES (zeroblob(?))').run(QUICK_CHECK_BYTES_MAX);
    });
    assert.ok(statSync(file).size > QUICK_CHECK_BYTES_MAX);
    const opened = await open(file);
    assert.throws(() => opened.prepare('SELECT x FROM t').all(), /malformed/);
    opened.close();
  });

  test('a file of exactly 64 MiB is still checked whole; one byte more is not', async () => {
    // Zeros past the pages the header counts (a sparse file): SQLite reads only what the header
    // says.
    const sized = async (size: number): Promise<string> => {
      const file = await damagedFile();
      truncateSync(file, size);
      return file;
    };
    await assert.rejects(open(await sized(QUICK_CHECK_BYTES_MAX)), (error: unknown) =>
      isStoreFault(error, 'corrupt'),
    );
    const opened = await open(await sized(QUICK_CHECK_BYTES_MAX + 1));
    assert.throws(() => opened.prepare('SELECT x FROM t').all(), /malformed/);
    opened.close();
  });

  test('a migration step that fails leaves nothing of that open behind: no table, no version', async () => {
    const file = freshFile();
    const broken: Migration = { version: 2, sql: 'CREATE TABLE u (x TEXT); THIS IS NOT SQL' };
    await assert.rejects(open(file, [TABLE, broken]), /syntax error/);
    const check = new Database(file, { readonly: true });
    const tables = check.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").all();
    check.close();
    assert.deepEqual(tables, []);
    const db = await open(file);
    db.close();
  });

  test('a migration step after which SQLite already rolled back fails with its own reason, not the ROLLBACK that follows', async () => {
    const file = freshFile();
    // As on a full disk: the transaction is gone when the step fails.
    const rolledBack: Migration = {
      version: 2,
      sql: 'CREATE TABLE u (x TEXT); ROLLBACK; THIS IS NOT SQL',
    };
    await assert.rejects(open(file, [TABLE, rolledBack]), /syntax error/);
  });

  test('readiness: a file answers while it is the one at its path, not once deleted; memory answers while open; a closed one never', async () => {
    const file = freshFile();
    const db = await open(file);
    assert.equal(sqliteResponds(db, file), true);
    rmSync(file);
    assert.equal(sqliteResponds(db, file), false);
    db.close();
    assert.equal(sqliteResponds(db, file), false);
    const memory = await open(':memory:');
    assert.equal(sqliteResponds(memory, ':memory:'), true);
    memory.close();
    assert.equal(sqliteResponds(memory, ':memory:'), false);
  });
});
