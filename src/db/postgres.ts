// Opening a PostgreSQL database the way every store here needs it: a bounded pool with time-outs on
// everything (connecting, waiting for a pooled connection, each statement), synchronous_commit on so
// that an acknowledged write is on the server's disk, versioned migrations that several instances
// may run at once, and every outage turned into a 503 rather than a hang or a 500.
//
// Unreachable at start: the store still opens (the service starts and answers 503, /readyz says
// not ready) and migrates on the first request that finds the database back. A database that
// answers but refuses us (wrong password, no such database, a failing migration) is a
// configuration error: opening fails and the process exits with the reason.
import pg from 'pg';
import type { Logger } from '../log.js';
import type { StoreObserver } from './store-observer.js';
import { isDatabaseUnavailable, translateDatabaseError } from './postgres-errors.js';
import type { Migration } from './sqlite.js';

export type SqlScalar = string | number | boolean | null;
/** Arrays go as PostgreSQL arrays: how a batch travels in one statement. */
export type SqlValue = SqlScalar | readonly SqlScalar[];

export interface SqlResult<R> {
  readonly rows: readonly R[];
  readonly rowCount: number;
}

/** One connection's worth of querying: the pool (one statement) or a transaction. */
export interface SqlSession {
  query<R extends object = Record<string, never>>(text: string, values?: readonly SqlValue[]): Promise<SqlResult<R>>;
}

export interface PostgresDatabase extends SqlSession {
  /**
   * A statement each pooled connection parses and plans once, then runs by name: for the hot
   * paths, where parsing every time would be most of the server's work. `name` must be unique.
   */
  prepared<R extends object>(name: string, text: string): (values: readonly SqlValue[]) => Promise<SqlResult<R>>;
  /** Runs `work` between BEGIN and COMMIT on one connection; any failure rolls it all back. */
  transaction<T>(work: (session: SqlSession) => Promise<T>): Promise<T>;
  /** True when the database answers within a short time and the schema is in place. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export interface PostgresOptions {
  readonly url: string;
  /** Migrations are counted per service, so that both services may share one database. */
  readonly service: string;
  readonly migrations: readonly Migration[];
  /** Runs once, in the transaction that creates the schema, so data is seeded only into a new database. */
  readonly seed: (session: SqlSession) => Promise<void>;
  readonly log?: Logger;
  /** Shown the pool's connections and told of each outage. */
  readonly observer?: StoreObserver;
}

/** Connections per store; the benchmark gives pgbench as many for its ceiling. */
export const POSTGRES_POOL_SIZE = 10;
/** Also bounds the wait for a free pooled connection when all ten are busy. */
const CONNECT_TIMEOUT_MS = 1_500;
/** Server side: a statement (or a lock wait) running longer than this is cancelled. */
const STATEMENT_TIMEOUT_MS = 1_500;
/** Client side: a server that stops answering mid-statement is given up on after this. */
const QUERY_TIMEOUT_MS = 2_000;
/** A transaction left open by a vanished client releases its locks after this. */
const IDLE_IN_TRANSACTION_MS = 5_000;
const IDLE_CONNECTION_MS = 10_000;
const PING_TIMEOUT_MS = 1_000;
/** pg_advisory_xact_lock key under which migrations run: any constant shared by all instances. */
const MIGRATION_LOCK = 7_310_001;

export async function openPostgres(options: PostgresOptions): Promise<PostgresDatabase> {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: POSTGRES_POOL_SIZE,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: IDLE_CONNECTION_MS,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    query_timeout: QUERY_TIMEOUT_MS,
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
    keepAlive: true,
    application_name: `status-services ${options.service}`,
    // The server default, stated so that no configuration elsewhere can weaken it unnoticed.
    options: '-c synchronous_commit=on',
  });
  const health = healthLog(options.log, options.service, options.observer);
  options.observer?.watchPool?.(() => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }));
  // A pooled connection that breaks while idle is reported here; without a listener it would
  // crash the process. The pool drops it and opens a new one when the database is back.
  pool.on('error', (error) => health.down(error));

  let migrated: Promise<void> | undefined;
  const ensureSchema = (): Promise<void> =>
    (migrated ??= migrate(pool, options).catch((error: unknown) => {
      migrated = undefined; // tried again by the next request
      throw error;
    }));

  /** Runs one step against the database; an outage becomes a 503, and is logged once. */
  async function guarded<T>(step: () => Promise<T>): Promise<T> {
    try {
      await ensureSchema();
      const result = await step();
      health.up();
      return result;
    } catch (error) {
      if (isDatabaseUnavailable(error)) health.down(error);
      throw translateDatabaseError(error);
    }
  }

  try {
    await ensureSchema();
  } catch (error) {
    if (!isDatabaseUnavailable(error)) {
      await pool.end();
      throw error;
    }
    health.down(error);
  }

  return {
    query: (text, values) => guarded(() => runQuery(pool, text, values)),
    prepared: (name, text) => (values) => guarded(() => runQuery(pool, text, values, name)),
    transaction: (work) => guarded(() => inTransaction(pool, work)),
    async ping() {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS);
      });
      const answer = guarded(() => runQuery(pool, 'SELECT 1')).then(
        () => true,
        () => false,
      );
      try {
        return await Promise.race([answer, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    close: () => pool.end(),
  };
}

async function runQuery<R extends object>(
  runner: pg.Pool | pg.PoolClient,
  text: string,
  values: readonly SqlValue[] = [],
  name?: string,
): Promise<SqlResult<R>> {
  const result = await runner.query<R & pg.QueryResultRow>({ text, values: [...values], name });
  return { rows: result.rows, rowCount: result.rowCount ?? 0 };
}

async function inTransaction<T>(pool: pg.Pool, work: (session: SqlSession) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // While checked out the pool no longer listens for this connection's errors; one that breaks
  // between two statements must fail the transaction, not crash the process.
  let broken: Error | undefined;
  const onError = (error: Error): void => {
    broken = error;
  };
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    const result = await work({ query: (text, values) => runQuery(client, text, values) });
    await client.query('COMMIT');
    client.off('error', onError);
    client.release();
    return result;
  } catch (error) {
    // Dropping the connection makes the server roll back; no ROLLBACK round trip to a server
    // that may be gone, and no half-finished transaction left on a pooled connection.
    client.off('error', onError);
    client.release(broken ?? (error instanceof Error ? error : new Error('transaction failed')));
    throw error;
  }
}

async function migrate(pool: pg.Pool, options: PostgresOptions): Promise<void> {
  const steps = [...options.migrations].sort((a, b) => a.version - b.version);
  await inTransaction(pool, async (session) => {
    // Instances starting together queue here: one creates the schema, the others find it done.
    await session.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await session.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (service TEXT NOT NULL, version INTEGER NOT NULL, PRIMARY KEY (service, version))',
    );
    const { rows } = await session.query<{ version: number | null }>(
      'SELECT MAX(version) AS version FROM schema_migrations WHERE service = $1',
      [options.service],
    );
    const current = rows[0]?.version ?? 0;
    for (const step of steps) {
      if (step.version <= current) continue;
      await session.query(step.sql);
      await session.query('INSERT INTO schema_migrations (service, version) VALUES ($1, $2)', [options.service, step.version]);
    }
    if (current === 0) await options.seed(session);
  });
}

/** Logs the moment the database goes away and the moment it is back, not every failed request. */
function healthLog(log: Logger | undefined, service: string, observer: StoreObserver | undefined): { down(error: unknown): void; up(): void } {
  let reachable = true;
  return {
    down(error) {
      if (!reachable) return;
      reachable = false;
      observer?.outage?.();
      log?.warn('database unreachable; answering 503 until it is back', {
        service,
        reason: error instanceof Error ? error.message : String(error),
      });
    },
    up() {
      if (reachable) return;
      reachable = true;
      log?.info('database reachable again', { service });
    },
  };
}
