// Which failures of `pg` are the database's fault, and which kind (see store-errors.ts), as opposed
// to a bug or a broken rule, which stays a plain error (a 500, logged). The lists are explicit on
// purpose: a TypeError or a constraint violation must never hide behind a 503.
import { StoreError, isStoreFault } from '../store-errors.js';

/** Socket-level failures Node reports while connecting or talking to the server. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** Failures that pg and pg-pool raise with a message and no code. */
const CLIENT_MESSAGES = new Set([
  'timeout exceeded when trying to connect',
  'Connection terminated due to connection timeout',
  'Connection terminated unexpectedly',
  'Connection terminated',
  'timeout expired',
  'Query read timeout',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
]);

type Make = (message: string, cause: unknown) => StoreError;
const unavailable: Make = (m, c) =>
  new StoreError('unavailable', `the database is unavailable: ${m}`, c);
const busy: Make = (m, c) => new StoreError('busy', `the database gave up waiting: ${m}`, c);

/**
 * SQLSTATEs, most specific first: an exact code, else its two-character class. Exported so that a
 * table-driven test can pin each row.
 */
export const SQLSTATE_FAULTS: readonly (readonly [string, Make])[] = [
  ['53100', (m, c) => new StoreError('full', `the database server's disk is full: ${m}`, c)], // disk_full
  [
    '53300',
    (m, c) => new StoreError('saturated', `the database server has no connection left: ${m}`, c),
  ], // too_many_connections
  ['25006', (m, c) => new StoreError('read-only', `the database refuses writes: ${m}`, c)], // read_only_sql_transaction
  ['XX001', (m, c) => new StoreError('corrupt', `the database is corrupt: ${m}`, c)], // data_corrupted
  ['XX002', (m, c) => new StoreError('corrupt', `the database is corrupt: ${m}`, c)], // index_corrupted
  ['57014', busy], // query_canceled: statement_timeout or lock wait cut short
  ['40001', busy], // serialization_failure
  ['40P01', busy], // deadlock_detected
  ['55P03', busy], // lock_not_available (lock_timeout)
  ['08', unavailable], // connection exception
  ['53', unavailable], // insufficient resources (out of memory, …)
  ['57', unavailable], // operator intervention: admin shutdown, crash shutdown, cannot connect now
  ['58', unavailable], // system error: I/O failure on the server
];

function sqlStateFault(code: string): Make | undefined {
  return (
    SQLSTATE_FAULTS.find(([key]) => key === code)?.[1] ??
    SQLSTATE_FAULTS.find(([key]) => key.length === 2 && code.startsWith(key))?.[1]
  );
}

/** The store error for a failure of pg, or undefined when it is not the database's fault. */
export function postgresStoreError(error: unknown): StoreError | undefined {
  if (error instanceof StoreError) return error;
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code)) return unavailable(error.message, error);
    if (/^[0-9A-Z]{5}$/.test(code)) return sqlStateFault(code)?.(error.message, error);
  }
  return CLIENT_MESSAGES.has(error.message) ? unavailable(error.message, error) : undefined;
}

/** A store error for a database fault; any other error unchanged. */
export function translatePostgresError(error: unknown): unknown {
  return postgresStoreError(error) ?? error;
}

/**
 * The database could not be reached: operations queued behind the one that met it would wait for
 * nothing, so they fail with it at once. (Busy or saturated is not this: a queue behind those
 * drains.)
 */
export const isOutage = (error: Error): boolean => isStoreFault(error, 'unavailable');
