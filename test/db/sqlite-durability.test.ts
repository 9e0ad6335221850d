// What makes an acknowledged SQLite write survive a power loss is not visible to a kill -9 test
// (the OS cache survives a killed process): it is the connection's settings. These tests pin them.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { LEDGER_MIGRATIONS, LEDGER_SERVICE } from '../../src/bank/ledger-sqlite-schema.js';
import { readConfig } from '../../src/config.js';
import { connectSqlite, openSqlite } from '../../src/db/sqlite/sqlite.js';

const FULL = 2; // PRAGMA synchronous: 0 OFF, 1 NORMAL, 2 FULL

async function withDatabaseFile(body: (location: string) => Promise<void> | void): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'durability-'));
  try {
    await body(join(dir, 'bank.sqlite'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the services run SQLite with synchronous=FULL unless told otherwise', () => {
  assert.equal(readConfig([], {}).sqliteSynchronous, 'FULL');
});

test('a connection other than the migrating one never creates the file: a file gone before it opens is an error', () =>
  withDatabaseFile((location) => {
    assert.throws(
      () => connectSqlite(location),
      (error: unknown) => (error as { code?: unknown }).code === 'SQLITE_CANTOPEN',
    );
    assert.equal(existsSync(location), false);
  }));

test('the group-commit writer connection, which does every write, is in WAL mode with synchronous=FULL', () =>
  withDatabaseFile(async (location) => {
    const main = await openSqlite({
      location,
      service: LEDGER_SERVICE,
      migrations: LEDGER_MIGRATIONS,
      seed: () => undefined,
    });
    // The writer thread opens its connection with exactly this call (group-commit-worker.ts).
    const writer = connectSqlite(location, 'FULL');
    try {
      assert.equal(writer.pragma('synchronous', { simple: true }), FULL);
      assert.equal(writer.pragma('journal_mode', { simple: true }), 'wal');
      assert.equal(main.pragma('synchronous', { simple: true }), FULL);
    } finally {
      writer.close();
      main.close();
    }
  }));
