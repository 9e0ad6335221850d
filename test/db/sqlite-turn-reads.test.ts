// Reads that share one read transaction per turn of the event loop (src/db/sqlite/turn-reads.ts):
// what a read sees of another connection's commits, within a turn and after it, and what happens
// when ending the snapshot fails. Two real connections to one WAL file; the failing COMMIT is a
// stand-in connection, since SQLite does not fail a read-only COMMIT on demand.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { connectSqlite, type SqliteDatabase } from '../../src/db/sqlite/sqlite.js';
import { directReads, turnScopedReads } from '../../src/db/sqlite/turn-reads.js';

const dir = mkdtempSync(join(tmpdir(), 'turn-reads-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

/** A reader and a writer on one new WAL file holding the table v(x). */
function twoConnections(): { reader: SqliteDatabase; writer: SqliteDatabase; close: () => void } {
  const file = join(dir, `db-${++files}.sqlite`);
  new Database(file).close(); // connectSqlite opens a database that exists, and creates none
  const writer = connectSqlite(file);
  writer.exec('CREATE TABLE v (x INTEGER)');
  const reader = connectSqlite(file);
  return { reader, writer, close: () => (reader.close(), writer.close()) };
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const count = (db: SqliteDatabase) => (): number =>
  (db.prepare('SELECT count(*) AS n FROM v').get() as { n: number }).n;
const noError = (error: unknown): void => assert.fail(`no error expected, got ${String(error)}`);

describe('reads that share a read transaction per turn', () => {
  test("the reads of one turn see the database as of the turn's first read; the next turn sees every commit", async () => {
    const { reader, writer, close } = twoConnections();
    try {
      const reads = turnScopedReads(reader, noError);
      assert.equal(reads.read(count(reader)), 0);
      writer.exec('INSERT INTO v VALUES (1)');
      assert.equal(reads.read(count(reader)), 0, 'same turn: the snapshot of its first read');
      assert.equal(reader.inTransaction, true);
      await turn();
      assert.equal(reader.inTransaction, false, 'the snapshot ended with the turn');
      assert.equal(reads.read(count(reader)), 1, 'next turn: the commit is seen');
    } finally {
      close();
    }
  });

  test('end() ends the snapshot at once: a read after it, in the same turn, sees every commit so far', async () => {
    const { reader, writer, close } = twoConnections();
    try {
      const reads = turnScopedReads(reader, noError);
      assert.equal(reads.read(count(reader)), 0);
      writer.exec('INSERT INTO v VALUES (1)');
      reads.end();
      assert.equal(reader.inTransaction, false);
      assert.equal(reads.read(count(reader)), 1);
      reads.end();
      reads.end(); // nothing open: nothing to do, nothing thrown
      await turn(); // the end scheduled for the first snapshot finds nothing open
      assert.equal(reader.inTransaction, false);
    } finally {
      close();
    }
  });

  test('a snapshot whose connection closed meanwhile, or whose transaction SQLite already ended, is let go quietly', async () => {
    const { reader, writer } = twoConnections();
    try {
      const reads = turnScopedReads(reader, noError);
      reads.read(count(reader));
      reader.exec('COMMIT');
      reads.end();
      assert.equal(reads.read(count(reader)), 0, 'a new snapshot begins');
      reader.close();
      await turn();
    } finally {
      writer.close();
      if (reader.open) reader.close();
    }
  });

  test('a COMMIT that fails is handed to onError and rolled back, so that the next read begins afresh; a failing ROLLBACK is handed on too', () => {
    for (const rollbackFails of [false, true]) {
      const { db, calls } = failingCommit(rollbackFails);
      const errors: string[] = [];
      const reads = turnScopedReads(db, (error) => errors.push((error as Error).message));
      assert.equal(
        reads.read(() => 'read'),
        'read',
      );
      reads.end();
      assert.deepEqual(
        errors,
        rollbackFails ? ['disk I/O error', 'rollback failed'] : ['disk I/O error'],
      );
      assert.deepEqual(calls, ['BEGIN', 'COMMIT', 'ROLLBACK']);
      reads.read(() => undefined);
      assert.deepEqual(
        calls,
        ['BEGIN', 'COMMIT', 'ROLLBACK', 'BEGIN'],
        'the next read begins a new transaction',
      );
    }
  });

  test('a COMMIT that fails and ends the transaction itself (as SQLite does on some I/O errors) is not rolled back again', () => {
    const { db, calls } = failingCommit(false, true);
    const errors: string[] = [];
    const reads = turnScopedReads(db, (error) => errors.push((error as Error).message));
    reads.read(() => undefined);
    reads.end();
    assert.deepEqual([errors, calls], [['disk I/O error'], ['BEGIN', 'COMMIT']]);
  });

  test('direct reads run the read as it is, and have nothing to end', () => {
    assert.equal(
      directReads.read(() => 42),
      42,
    );
    directReads.end();
  });
});

/**
 * A connection whose COMMIT fails (ending the transaction, if asked; and ROLLBACK fails too, if
 * asked), recording the statements run.
 */
function failingCommit(
  rollbackFails: boolean,
  commitEnds = false,
): { db: SqliteDatabase; calls: string[] } {
  const calls: string[] = [];
  let inTransaction = false;
  const db = {
    open: true,
    get inTransaction() {
      return inTransaction;
    },
    prepare: (sql: string) => ({
      run: () => {
        calls.push(sql);
        if (sql === 'BEGIN') {
          inTransaction = true;
          return;
        }
        if (commitEnds) inTransaction = false;
        throw new Error('disk I/O error');
      },
    }),
    exec: (sql: string) => {
      calls.push(sql);
      if (rollbackFails) throw new Error('rollback failed');
      inTransaction = false;
    },
  };
  return { db: db as unknown as SqliteDatabase, calls };
}
