// PostgreSQL through a pooler that lends a server connection per transaction (PgBouncer with
// pool_mode = transaction): from one transaction to the next, a client may be on another server
// connection, shared with other clients. So nothing may be kept in a session: no startup
// parameters (PgBouncer refuses them, application_name aside), no named prepared statements (a
// name parsed on one server connection is unknown on the next), no session-level SET. The
// settings a direct connection gets at start are made per transaction instead, with SET LOCAL,
// and a statement is cancelled with the protocol's own cancel request, which the pooler forwards
// to the server connection the client is on (pg_cancel_backend would need the server's process
// id, which the pooler hides).
import net from 'node:net';

/** none: connections straight to PostgreSQL, or a pooler in session mode; transaction: PgBouncer's pool_mode = transaction. */
export type Pooler = 'none' | 'transaction';
export const POOLERS: readonly Pooler[] = ['none', 'transaction'];

/** The session settings every connection needs; set at start (none) or in each transaction (transaction). */
export interface SessionSettings {
  readonly statementTimeoutMs: number;
  readonly idleInTransactionMs: number;
}

/** What opens a transaction: BEGIN, and through a transaction pooler the settings, in the same round trip. */
export function beginSql(pooler: Pooler, settings: SessionSettings): string {
  if (pooler === 'none') return 'BEGIN';
  return `BEGIN; SET LOCAL statement_timeout = ${settings.statementTimeoutMs}; SET LOCAL idle_in_transaction_session_timeout = ${settings.idleInTransactionMs}; SET LOCAL synchronous_commit = on`;
}

/** A configuration to fix, not an outage: the process stops at start with its one line, as for a bad option. */
export class PoolerMismatch extends Error {
  override readonly name = 'PoolerMismatch';
}

/** PgBouncer's answer to a startup parameter it does not pass on: the service is behind a pooler it was not told of. */
const REFUSED_PARAMETER = /^unsupported startup parameter: (\S+)/;

/**
 * The one line a service stops with when a pooler refuses the session settings of a direct
 * connection; undefined for any other failure.
 */
export function poolerRefusal(error: unknown): PoolerMismatch | undefined {
  if (!(error instanceof Error)) return undefined;
  const refused = REFUSED_PARAMETER.exec(error.message);
  if (refused === null) return undefined;
  return new PoolerMismatch(
    `the PostgreSQL server refused the startup parameter ${refused[1]}: it is a pooler (PgBouncer?); start with --db-pooler transaction (docs/storage.md#behind-pgbouncer)`,
  );
}

/** Sending a cancel request: a server that does not take it within this is left to the statement's own time-out. */
const CANCEL_TIMEOUT_MS = 1_000;
/** The protocol's CancelRequest code (PostgreSQL frontend/backend protocol, "CancelRequest"). */
const CANCEL_REQUEST_CODE = 80877102;

/** Asks the server (or the pooler) at host:port to cancel what the connection keyed by processId and secretKey runs. */
export function sendCancelRequest(
  host: string,
  port: number,
  processId: number,
  secretKey: number,
): void {
  const message = Buffer.alloc(16);
  message.writeInt32BE(16, 0);
  message.writeInt32BE(CANCEL_REQUEST_CODE, 4);
  message.writeInt32BE(processId, 8);
  message.writeInt32BE(secretKey, 12);
  const socket = net.connect({ host, port });
  socket.setTimeout(CANCEL_TIMEOUT_MS, () => socket.destroy());
  socket.on('error', () => undefined);
  // The server closes the connection once it has acted on the request; closing it first, as soon
  // as the request is written, is what libpq avoids too: PgBouncer 1.18 then forwards nothing, or
  // forwards it and then stops with "bad client state".
  socket.on('connect', () => socket.write(message));
  socket.on('end', () => socket.destroy());
}
