// Opening a SQLite store's file (src/db/sqlite.ts), in this process on real files: the folders are
// made, a damaged file stops the open with the reason, a failed migration leaves nothing behind, and
// the readiness check notices a file deleted under a running store.
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { StoreCorruptError } from '../../src/db/store-errors.js';
import { openSqlite, QUICK_CHECK_BYTES_MAX, sqliteAnswers, type SqliteDatabase } from '../../src/db/sqlite.js';
import type { Migration } from '../../src/db/migrations.js';

const dir = mkdtempSync(join(tmpdir(), 'sqlite-open-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshFile = (): string => join(dir, `db-${++files}.sqlite`);

const TABLE: Migration = { version: 1, sql: 'CREATE TABLE t (x TEXT)' };
const open = (location: string, migrations: readonly Migration[] = [TABLE]): Promise<SqliteDatabase> =>
  openSqlite({ location, service: 'svc', migrations, seed: () => undefined });

describe('opening SQLite', () => {
  test('a new file is created with the folders of its path', async () => {
    const file = join(dir, 'a', 'b', 'c', 'store.sqlite');
    const db = await open(file);
    db.close();
    const check = new Database(file, { readonly: true });
    assert.deepEqual(check.prepare('SELECT version FROM schema_migrations').all(), [{ version: 1 }]);
    check.close();
  });

  test('a file damaged past its header stops the open with StoreCorruptError naming what quick_check found', async () => {
    const file = freshFile();
    const db = await open(file);
    const insert = db.prepare('INSERT INTO t (x) VALUES (?)');
    for (let i = 0; i < 200; i++) insert.run('x'.repeat(200));
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    // Page 4 onwards hold the rows of t: overwrite one with noise, past the header and the schema.
    const fd = openSync(file, 'r+');
    writeSync(fd, Buffer.alloc(4096, 0xa5), 0, 4096, 4 * 4096);
    closeSync(fd);
    await assert.rejects(open(file), (error: unknown) => {
      assert.ok(error instanceof StoreCorruptError, String(error));
      assert.match(error.message, /^the database is corrupt: quick_check found "(?!ok")[^"]+"$/);
      return true;
    });
  });

  test('a file over 64 MiB opens without the whole-file check, so that a large store starts at once: the same damage is not looked for', async () => {
    const file = freshFile();
    const db = await open(file);
    const insert = db.prepare('INSERT INTO t (x) VALUES (?)');
    for (let i = 0; i < 200; i++) insert.run('x'.repeat(200));
    db.exec('CREATE TABLE big (b BLOB)');
    db.prepare('INSERT INTO big (b) VALUES (zeroblob(?))').run(QUICK_CHECK_BYTES_MAX);
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    assert.ok(statSync(file).size > QUICK_CHECK_BYTES_MAX);
    const fd = openSync(file, 'r+');
    writeSync(fd, Buffer.alloc(4096, 0xa5), 0, 4096, 4 * 4096);
    closeSync(fd);
    const opened = await open(file);
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

  test('readiness: a file answers while it is the one at its path, not once deleted; memory answers while open; a closed one never', async () => {
    const file = freshFile();
    const db = await open(file);
    assert.equal(sqliteAnswers(db, file), true);
    rmSync(file);
    assert.equal(sqliteAnswers(db, file), false);
    db.close();
    assert.equal(sqliteAnswers(db, file), false);
    const memory = await open(':memory:');
    assert.equal(sqliteAnswers(memory, ':memory:'), true);
    memory.close();
    assert.equal(sqliteAnswers(memory, ':memory:'), false);
  });
});
