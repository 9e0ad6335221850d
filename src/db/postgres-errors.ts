// Which failures of `pg` mean "the database cannot be reached right now" (the client should retry:
// 503), as opposed to a bug or a broken rule (500). The list is explicit on purpose: a TypeError
// or a constraint violation must stay a 500 and be logged, never be hidden behind a 503.
import { ServiceUnavailableError } from '../http/errors.js';

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

/** SQLSTATEs the server sends when it is going away, overloaded, or gave up waiting. */
function isTransientSqlState(code: string): boolean {
  return (
    code.startsWith('08') || // connection exception
    code.startsWith('53') || // insufficient resources, e.g. too many connections
    code.startsWith('57') || // operator intervention: shutdown, cannot connect now, statement timeout
    code === '40001' || // serialization failure
    code === '40P01' || // deadlock detected
    code === '55P03' // lock not available (lock_timeout)
  );
}

export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || isTransientSqlState(code))) return true;
  return CLIENT_MESSAGES.has(error.message);
}

/** A 503 for an outage, the error itself for anything else. */
export function translateDatabaseError(error: unknown): unknown {
  return isDatabaseUnavailable(error) ? new ServiceUnavailableError() : error;
}

/**
 * An error the store already turned into a 503: the database could not be reached. Operations
 * queued behind the one that met it would wait for nothing, so they fail with it at once.
 */
export const isOutage = (error: Error): boolean => error instanceof ServiceUnavailableError;
