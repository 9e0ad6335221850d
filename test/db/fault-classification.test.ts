// Which database failures are which store fault, and how the services answer each: table-driven,
// one row per promise. Real failures of each kind are produced end to end in test/reliability/.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  isOutage,
  postgresStoreError,
  translatePostgresError,
} from '../../src/db/postgres/errors.js';
import { sqliteStoreError, translateSqliteError } from '../../src/db/sqlite/errors.js';
import { isStoreFault, StoreError, type StoreFault } from '../../src/db/store-errors.js';
import { ApiError } from '../../src/http/errors.js';
import { errorForStoreFault } from '../../src/store-fault-responses.js';

const pgError = (code: string, message = `pg ${code}`): Error =>
  Object.assign(new Error(message), { code });

describe('PostgreSQL failures by SQLSTATE', () => {
  // Each row: the SQLSTATE, its name, its store fault, and the words the message starts with before
  // PostgreSQL's own.
  const rows: readonly (readonly [string, string, StoreFault | undefined, string?])[] = [
    ['53100', 'disk_full', 'full', "the database server's disk is full"],
    ['53300', 'too_many_connections', 'saturated', 'the database server has no connection left'],
    ['53200', 'out_of_memory (class 53)', 'unavailable', 'the database is unavailable'],
    ['25006', 'read_only_sql_transaction', 'read-only', 'the database refuses writes'],
    ['XX001', 'data_corrupted', 'corrupt', 'the database is corrupt'],
    ['XX002', 'index_corrupted', 'corrupt', 'the database is corrupt'],
    ['57014', 'query_canceled (statement_timeout)', 'busy', 'the database gave up waiting'],
    ['40001', 'serialization_failure', 'busy', 'the database gave up waiting'],
    ['40P01', 'deadlock_detected', 'busy', 'the database gave up waiting'],
    ['55P03', 'lock_not_available', 'busy', 'the database gave up waiting'],
    ['08006', 'connection_failure (class 08)', 'unavailable', 'the database is unavailable'],
    [
      '08001',
      'sqlclient_unable_to_establish_sqlconnection',
      'unavailable',
      'the database is unavailable',
    ],
    ['57P01', 'admin_shutdown (class 57)', 'unavailable', 'the database is unavailable'],
    ['57P03', 'cannot_connect_now (class 57)', 'unavailable', 'the database is unavailable'],
    ['58030', 'io_error (class 58)', 'unavailable', 'the database is unavailable'],
    ['23505', 'unique_violation: a bug, not a fault', undefined],
    ['23514', 'check_violation: a bug, not a fault', undefined],
    ['42P01', 'undefined_table: a bug, not a fault', undefined],
    ['28P01', 'invalid_password: configuration, not a fault', undefined],
    ['3D000', 'invalid_catalog_name: configuration, not a fault', undefined],
    ['XX000', 'internal_error: not known to be corruption', undefined],
    ['08', 'a bare class, which is no SQLSTATE', undefined],
    ['080060', 'six characters, which is no SQLSTATE', undefined],
    ['x08006', 'a SQLSTATE inside a longer code', undefined],
    ['57p01', 'lower case, which PostgreSQL never sends', undefined],
  ];
  for (const [code, name, expected, says] of rows) {
    test(`${code} ${name} is ${expected === undefined ? 'left as it is (a 500)' : `the ${expected} fault`}`, () => {
      const cause = pgError(code);
      const fault = postgresStoreError(cause);
      if (expected === undefined) return assert.equal(fault, undefined);
      assert.ok(isStoreFault(fault, expected), `${code} gave ${fault?.code}`);
      assert.equal(fault.message, `${says}: pg ${code}`);
      assert.equal(fault.cause, cause);
    });
  }

  test('every socket failure Node reports while connecting or talking is unavailability; another code is left alone', () => {
    for (const code of [
      'ECONNREFUSED',
      'ECONNRESET',
      'ECONNABORTED',
      'ETIMEDOUT',
      'EPIPE',
      'EHOSTUNREACH',
      'ENETUNREACH',
      'ENOTFOUND',
      'EAI_AGAIN',
    ]) {
      const fault = postgresStoreError(pgError(code));
      assert.ok(isStoreFault(fault, 'unavailable'), code);
      assert.equal(fault.message, `the database is unavailable: pg ${code}`);
    }
    assert.equal(postgresStoreError(pgError('EACCES')), undefined);
  });

  test('every failure pg and pg-pool raise with a message and no code is unavailability, by that exact message', () => {
    const messages = [
      'timeout exceeded when trying to connect',
      'Connection terminated due to connection timeout',
      'Connection terminated unexpectedly',
      'Connection terminated',
      'timeout expired',
      'Query read timeout',
      'Client has encountered a connection error and is not queryable',
      'Client was closed and is not queryable',
    ];
    for (const message of messages) {
      const fault = postgresStoreError(new Error(message));
      assert.ok(isStoreFault(fault, 'unavailable'), message);
      assert.equal(fault.message, `the database is unavailable: ${message}`);
    }
    assert.equal(postgresStoreError(new Error('Connection terminated by the user')), undefined);
  });

  test('a store error is already classified: it comes back as it is', () => {
    const fault = new StoreError('busy', 'busy');
    assert.equal(postgresStoreError(fault), fault);
    assert.equal(translatePostgresError(fault), fault);
  });

  test('translatePostgresError gives the store error for a fault, and leaves anything else as it was', () => {
    const bug = new TypeError('x is undefined');
    assert.equal(translatePostgresError(bug), bug);
    assert.ok(isStoreFault(translatePostgresError(pgError('57P01')), 'unavailable'));
  });

  test('only unavailability is an outage that fails the queue behind it; busy and saturated queues drain', () => {
    assert.equal(isOutage(new StoreError('unavailable', 'gone')), true);
    for (const error of [
      new StoreError('busy', 'busy'),
      new StoreError('saturated', 'full pool'),
      new Error('bug'),
    ])
      assert.equal(isOutage(error), false, error.message);
  });

  test('an error without a code, and a value that is no error, are left as they are', () => {
    assert.equal(postgresStoreError(new TypeError('x is undefined')), undefined);
    assert.equal(postgresStoreError('53100'), undefined);
    assert.equal(postgresStoreError(null), undefined);
    assert.equal(postgresStoreError(undefined), undefined);
    assert.equal(
      postgresStoreError(Object.assign(new Error('coded by a number'), { code: 53100 })),
      undefined,
    );
  });
});

describe('SQLite failures by result code', () => {
  // Each family: its store fault, and the words its message starts with before SQLite's own.
  const rows: readonly (readonly [string, StoreFault | undefined, string?])[] = [
    ['SQLITE_CORRUPT', 'corrupt', 'the database is corrupt'],
    ['SQLITE_CORRUPT_INDEX', 'corrupt', 'the database is corrupt'],
    ['SQLITE_NOTADB', 'corrupt', 'the database is corrupt'],
    ['SQLITE_FULL', 'full', "the database's disk is full"],
    ['SQLITE_READONLY', 'read-only', 'the database is read-only'],
    ['SQLITE_READONLY_DBMOVED', 'read-only', 'the database is read-only'],
    ['SQLITE_BUSY', 'busy', 'the database is locked by another writer'],
    ['SQLITE_BUSY_SNAPSHOT', 'busy', 'the database is locked by another writer'],
    ['SQLITE_LOCKED', 'busy', 'the database is locked by another writer'],
    ['SQLITE_IOERR', 'unavailable', "the database's disk failed"],
    ['SQLITE_IOERR_FSYNC', 'unavailable', "the database's disk failed"],
    ['SQLITE_CANTOPEN', 'unavailable', 'the database file cannot be opened'],
    ['SQLITE_PERM', 'unavailable', 'the database file may not be accessed'],
    ['SQLITE_NOMEM', 'unavailable', 'SQLite ran out of memory'],
    ['SQLITE_CONSTRAINT_CHECK', undefined],
    ['SQLITE_ERROR', undefined],
    ['SQLITE_FULLNESS', undefined],
  ];
  for (const [code, expected, says] of rows) {
    test(`${code} is ${expected === undefined ? 'left as it is (a 500)' : `the ${expected} fault`}${says === undefined ? '' : `: "${says}: …"`}`, () => {
      const cause = new Error('message');
      const fault = sqliteStoreError(code, 'message', cause);
      if (expected === undefined) return assert.equal(fault, undefined);
      assert.ok(isStoreFault(fault, expected), `${code} gave ${fault?.code}`);
      assert.equal(fault.message, `${says}: message`);
      assert.equal(fault.cause, cause);
    });
  }

  test('a thrown SQLite failure becomes its store error, keeping the failure as its cause', () => {
    const thrown = Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE' });
    const fault = translateSqliteError(thrown);
    assert.ok(isStoreFault(fault, 'unavailable'));
    assert.equal(fault.message, "the database's disk failed: disk I/O error");
    assert.equal(fault.cause, thrown);
  });

  test("a store error, a failure that is not the database's, an error without a string code, and a value that is no error pass unchanged", () => {
    for (const error of [
      new StoreError('busy', 'already classified'),
      Object.assign(new Error('CHECK constraint failed'), { code: 'SQLITE_CONSTRAINT_CHECK' }),
      Object.assign(new Error('odd'), { code: 5 }),
      new Error('no code'),
      'SQLITE_FULL',
      undefined,
    ]) {
      assert.equal(translateSqliteError(error), error);
    }
  });
});

describe('how the services answer each store fault', () => {
  const passing = [
    new StoreError('unavailable', 'x'),
    new StoreError('busy', 'x'),
    new StoreError('saturated', 'x'),
    new StoreError('full', 'x'),
    new StoreError('read-only', 'x'),
  ];
  for (const fault of passing) {
    test(`${fault.code} is a 503 with Retry-After`, () => {
      const answer = errorForStoreFault(fault);
      assert.ok(answer instanceof ApiError && answer.code === 'HTTP_503');
      assert.equal(answer.status, 503);
      assert.deepEqual(answer.headers, { 'Retry-After': '1' });
    });
  }

  test('STORE_CORRUPT stays an internal failure (the 500 of the active format)', () => {
    const corrupt = new StoreError('corrupt', 'x');
    assert.equal(errorForStoreFault(corrupt), corrupt);
  });

  test('an error that is no store fault passes unchanged', () => {
    const bug = new TypeError('bug');
    assert.equal(errorForStoreFault(bug), bug);
  });

  test('each fault has its own stable code and fault name, and says whether it is the writes that fail', () => {
    const faults = [...passing, new StoreError('corrupt', 'x')].map(
      (fault) => `${fault.code} ${fault.fault} ${fault.failsWrites ? 'writes fail' : 'not writes'}`,
    );
    assert.deepEqual(faults, [
      'STORE_UNAVAILABLE unavailable not writes',
      'STORE_BUSY busy not writes',
      'STORE_SATURATED saturated not writes',
      'STORE_FULL full writes fail',
      'STORE_READ_ONLY read-only writes fail',
      'STORE_CORRUPT corrupt not writes',
    ]);
  });

  test('a store error keeps what caused it, and has no cause when given none', () => {
    const cause = new Error('socket hang up');
    assert.equal(new StoreError('unavailable', 'x', cause).cause, cause);
    assert.equal('cause' in new StoreError('unavailable', 'x'), false);
    assert.equal(new StoreError('unavailable', 'x').name, 'StoreError');
  });
});
