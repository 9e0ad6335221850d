// Which database failures are which store fault, and how the services answer each: table-driven, one
// row per promise. Real failures of each kind are produced end to end in test/reliability/.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { postgresStoreError } from '../../src/db/postgres-errors.js';
import { sqliteStoreError } from '../../src/db/sqlite-errors.js';
import {
  StoreBusyError,
  StoreCorruptError,
  StoreError,
  StoreFullError,
  StoreReadOnlyError,
  StoreSaturatedError,
  StoreUnavailableError,
} from '../../src/db/store-errors.js';
import { ServiceUnavailableError } from '../../src/http/errors.js';
import { answerForStoreError } from '../../src/store-answers.js';

type FaultClass = abstract new (...args: never[]) => StoreError;

const pgError = (code: string, message = `pg ${code}`): Error => Object.assign(new Error(message), { code });

describe('PostgreSQL failures by SQLSTATE', () => {
  const rows: readonly (readonly [string, string, FaultClass | undefined])[] = [
    ['53100', 'disk_full', StoreFullError],
    ['53300', 'too_many_connections', StoreSaturatedError],
    ['53200', 'out_of_memory (class 53)', StoreUnavailableError],
    ['25006', 'read_only_sql_transaction', StoreReadOnlyError],
    ['XX001', 'data_corrupted', StoreCorruptError],
    ['XX002', 'index_corrupted', StoreCorruptError],
    ['57014', 'query_canceled (statement_timeout)', StoreBusyError],
    ['40001', 'serialization_failure', StoreBusyError],
    ['40P01', 'deadlock_detected', StoreBusyError],
    ['55P03', 'lock_not_available', StoreBusyError],
    ['08006', 'connection_failure (class 08)', StoreUnavailableError],
    ['08001', 'sqlclient_unable_to_establish_sqlconnection', StoreUnavailableError],
    ['57P01', 'admin_shutdown (class 57)', StoreUnavailableError],
    ['57P03', 'cannot_connect_now (class 57)', StoreUnavailableError],
    ['58030', 'io_error (class 58)', StoreUnavailableError],
    ['23505', 'unique_violation: a bug, not a fault', undefined],
    ['23514', 'check_violation: a bug, not a fault', undefined],
    ['42P01', 'undefined_table: a bug, not a fault', undefined],
    ['28P01', 'invalid_password: configuration, not a fault', undefined],
    ['3D000', 'invalid_catalog_name: configuration, not a fault', undefined],
    ['XX000', 'internal_error: not known to be corruption', undefined],
  ];
  for (const [code, name, expected] of rows) {
    test(`${code} ${name} is ${expected?.name ?? 'left as it is (a 500)'}`, () => {
      const fault = postgresStoreError(pgError(code));
      if (expected === undefined) assert.equal(fault, undefined);
      else assert.ok(fault instanceof expected, `${code} gave ${fault?.name}`);
    });
  }

  test('socket failures and pg client messages are unavailability', () => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND']) {
      assert.ok(postgresStoreError(pgError(code)) instanceof StoreUnavailableError, code);
    }
    for (const message of ['Connection terminated unexpectedly', 'timeout exceeded when trying to connect', 'Query read timeout']) {
      assert.ok(postgresStoreError(new Error(message)) instanceof StoreUnavailableError, message);
    }
  });

  test('an error without a code, and a value that is no error, are left as they are', () => {
    assert.equal(postgresStoreError(new TypeError('x is undefined')), undefined);
    assert.equal(postgresStoreError('53100'), undefined);
  });
});

describe('SQLite failures by result code', () => {
  const rows: readonly (readonly [string, FaultClass | undefined])[] = [
    ['SQLITE_CORRUPT', StoreCorruptError],
    ['SQLITE_CORRUPT_INDEX', StoreCorruptError],
    ['SQLITE_NOTADB', StoreCorruptError],
    ['SQLITE_FULL', StoreFullError],
    ['SQLITE_READONLY', StoreReadOnlyError],
    ['SQLITE_READONLY_DBMOVED', StoreReadOnlyError],
    ['SQLITE_BUSY', StoreBusyError],
    ['SQLITE_BUSY_SNAPSHOT', StoreBusyError],
    ['SQLITE_LOCKED', StoreBusyError],
    ['SQLITE_IOERR', StoreUnavailableError],
    ['SQLITE_IOERR_FSYNC', StoreUnavailableError],
    ['SQLITE_CANTOPEN', StoreUnavailableError],
    ['SQLITE_PERM', StoreUnavailableError],
    ['SQLITE_CONSTRAINT_CHECK', undefined],
    ['SQLITE_ERROR', undefined],
    ['SQLITE_FULLNESS', undefined],
  ];
  for (const [code, expected] of rows) {
    test(`${code} is ${expected?.name ?? 'left as it is (a 500)'}`, () => {
      const fault = sqliteStoreError(code, 'message');
      if (expected === undefined) assert.equal(fault, undefined);
      else assert.ok(fault instanceof expected, `${code} gave ${fault?.name}`);
    });
  }
});

describe('how the services answer each store fault', () => {
  const passing = [
    new StoreUnavailableError('x'),
    new StoreBusyError('x'),
    new StoreSaturatedError('x'),
    new StoreFullError('x'),
    new StoreReadOnlyError('x'),
  ];
  for (const fault of passing) {
    test(`${fault.code} is a 503 with Retry-After`, () => {
      const answer = answerForStoreError(fault);
      assert.ok(answer instanceof ServiceUnavailableError);
      assert.equal(answer.status, 503);
      assert.deepEqual(answer.headers, { 'Retry-After': '1' });
    });
  }

  test('STORE_CORRUPT stays an internal failure (the 500 of the active format)', () => {
    const corrupt = new StoreCorruptError('x');
    assert.equal(answerForStoreError(corrupt), corrupt);
  });

  test('an error that is no store fault passes unchanged', () => {
    const bug = new TypeError('bug');
    assert.equal(answerForStoreError(bug), bug);
  });

  test('each fault has its own stable code', () => {
    const codes = [...passing, new StoreCorruptError('x')].map((fault) => fault.code);
    assert.deepEqual(codes, ['STORE_UNAVAILABLE', 'STORE_BUSY', 'STORE_SATURATED', 'STORE_FULL', 'STORE_READ_ONLY', 'STORE_CORRUPT']);
  });
});
