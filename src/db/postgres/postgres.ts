// Opening a PostgreSQL database the way every store here needs it: a bounded pool with time-outs on
// everything (connecting, waiting for a pooled connection, each statement), synchronous_commit on
// so that an acknowledged write is on the server's disk, versioned migrations that several
// instances may run at once, and every database fault turned into a store error (store-errors.ts)
// rather than a hang or a crash.
//
// Unreachable at start: the store still opens (the service starts and answers 503, /readyz says
// not ready) and migrates on the first request that finds the database back. A database that
// answers but refuses us (wrong password, no such database, a failing migration) is a
// configuration error: opening fails and the process exits with the reason.
import pg from 'pg';
import { DeadlinePassed, type Deadline } from '../../common/deadline.js';
import { UNBOUNDED_WORK, type Work } from '../../common/work.js';
import type { Logger } from '../../observe/log.js';
import {
  runMigrations,
  WRITE_PROBE_STATEMENTS,
  type Migration,
  type MigrationSession,
} from '../migrations.js';
import { PoolGate } from './pool-gate.js';
import { beginSql, poolerRefusal, sendCancelRequest, type Pooler } from './pooler.js';
import { postgresStoreError } from './errors.js';
import { StoreError } from '../store-errors.js';
import { StoreHealth } from '../store-health.js';
import type { StoreObserver } from '../store-observer.js';

export type SqlScalar = string | number | boolean | null;
/** Arrays go as PostgreSQL arrays: how a batch travels in one statement. */
export type SqlValue = SqlScalar | readonly SqlScalar[];

export interface SqlResult<R> {
  readonly rows: readonly R[];
  readonly rowCount: number;
}

/** One connection's worth of querying: the pool (one statement) or a transaction. */
export interface SqlSession {
  /**
   * With a `name`, each connection parses and plans the statement once, then runs it by name: for
   * the hot paths, where parsing every time would be most of the server's work. A name is unique.
   */
  query<R extends object = Record<string, never>>(
    text: string,
    values?: readonly SqlValue[],
    name?: string,
  ): Promise<SqlResult<R>>;
}

export interface PostgresDatabase extends SqlSession {
  /**
   * A statement on the pool. `work` (none: unbounded) bounds its wait for a pooled connection and,
   * for a read, the statement itself, which is cancelled when its deadline passes.
   */
  query<R extends object = Record<string, never>>(
    text: string,
    values?: readonly SqlValue[],
    name?: string,
    work?: Work,
  ): Promise<SqlResult<R>>;
  /**
   * Statements on the pool that write, whatever their first word (a write through a function is a
   * SELECT): each that succeeds also tells the store's health that writes work again. `query`
   * takes a statement that starts with SELECT for a read, which says nothing about writes.
   */
  readonly writes: SqlSession;
  /**
   * A statement each pooled connection parses and plans once, then runs by name: for the hot
   * paths, where parsing every time would be most of the server's work. `name` must be unique.
   * `kind` is read from the text (a SELECT reads) unless given. Each run is bounded by its `work`,
   * as `query` is.
   */
  prepared<R extends object>(
    name: string,
    text: string,
    kind?: 'read' | 'write',
  ): (values: readonly SqlValue[], work: Work) => Promise<SqlResult<R>>;
  /** Runs `work` between BEGIN and COMMIT on one connection; any failure rolls it all back. */
  transaction<T>(work: (session: SqlSession) => Promise<T>): Promise<T>;
  /** True when the database answers within a short time, the schema is in place and writes work. */
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
  readonly observer?: StoreObserver;
  /** Connections this service keeps at most (POSTGRES_POOL_SIZE). */
  readonly poolSize?: number;
  /** How long an operation may wait for one of them before it fails as saturation (POOL_WAIT_MS_DEFAULT). */
  readonly poolWaitMs?: number;
  /** Through a pooler in transaction mode, nothing is kept in a session (postgres-pooler.ts); default none. */
  readonly pooler?: Pooler;
}

/** Connections per store unless --db-pool-size says otherwise; the benchmark gives pgbench as many for its ceiling. */
export const POSTGRES_POOL_SIZE = 10;
/**
 * A burst queues rather than fails: 5,000 withdrawals at once take a few seconds on ten
 * connections, well within the 30 s a request may take. Connecting has its own, short bound
 * (CONNECT_TIMEOUT_MS).
 */
export const POOL_WAIT_MS_DEFAULT = 10_000;
/** Opening one connection: a server that does not accept within this is unavailable. */
const CONNECT_TIMEOUT_MS = 1_500;
/** Server side: a statement (or a lock wait) running longer than this is cancelled. */
export const STATEMENT_TIMEOUT_MS = 1_500;
/** Client side: a server that stops answering mid-statement is given up on after this. */
const QUERY_TIMEOUT_MS = 2_000;
/** A transaction left open by a vanished client releases its locks after this. */
const IDLE_IN_TRANSACTION_MS = 5_000;
const IDLE_CONNECTION_MS = 10_000;
/** A readiness check answers within this, whatever the database does. */
export const PING_TIMEOUT_MS = 1_000;
/** pg_advisory_xact_lock key under which migrations run: any constant shared by all instances. */
const MIGRATION_LOCK = 7_310_001;

/** The pool, its connections bounded in time, so that a database that stops answering is noticed. */
function newPool(options: PostgresOptions, size: number, pooler: Pooler): pg.Pool {
  return new pg.Pool({
    connectionString: options.url,
    max: size,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: IDLE_CONNECTION_MS,
    query_timeout: QUERY_TIMEOUT_MS,
    keepAlive: true,
    application_name: `status-services ${options.service}`,
    // Through a transaction pooler, each transaction sets these itself (beginSql).
    ...(pooler === 'none'
      ? {
          statement_timeout: STATEMENT_TIMEOUT_MS,
          idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
          // The server default, stated so that no configuration elsewhere can weaken it unnoticed.
          options: '-c synchronous_commit=on',
        }
      : {}),
  });
}

export async function openPostgres(options: PostgresOptions): Promise<PostgresDatabase> {
  const size = options.poolSize ?? POSTGRES_POOL_SIZE;
  const pooler = options.pooler ?? 'none';
  const pool = newPool(options, size, pooler);
  const sql = sqlRunner(pool, pooler);
  const { observer } = options;
  const health = new StoreHealth(options.log, observer);
  // The gate lets at most `size` operations at the pool, so pg-pool itself never queues: its
  // time-out then bounds only connecting, and a long wait is saturation, not an outage.
  const gate = new PoolGate({
    size,
    waitMs: options.poolWaitMs ?? POOL_WAIT_MS_DEFAULT,
    onWaited: observer?.poolWaited === undefined ? undefined : (ms) => observer.poolWaited?.(ms),
  });
  // The waiting happens at the gate: pg-pool's own queue stays empty.
  observer?.watchPool?.(() => ({
    total: pool.totalCount,
    idle: pool.idleCount,
    waiting: gate.usage.waiting,
  }));
  // A pooled connection that breaks while idle is reported here; without a listener it would
  // crash the process. The pool drops it and opens a new one when the database is back.
  pool.on('error', (error) => {
    const fault = postgresStoreError(error);
    if (fault !== undefined) health.failed(fault);
  });
  // pg-pool listens for a connection's errors only while it is idle. One checked out (for a read,
  // a transaction, a migration) that breaks — reset, terminated, timed out — emits 'error' as well
  // as failing its statement, and an 'error' with no listener ends the process. So each connection
  // has a listener for its whole life; the statement's own failure is what reports the fault.
  pool.on('connect', (client) => client.on('error', ignoreReportedElsewhere));

  let migrated: Promise<void> | undefined;
  const ensureSchema = (): Promise<void> =>
    (migrated ??= migrate(sql, options).catch((error: unknown) => {
      migrated = undefined; // tried again by the next request
      throw error;
    }));

  /**
   * While the database is unavailable, one operation at a time tries it and the others fail at
   * once: otherwise each wave of operations that gets a pooled turn would wait out its own connect
   * time-out, and a client would wait several of them for its 503.
   */
  let trying = false;
  /** Pings waiting for any operation to succeed: under a queue, the sign that the database works through it. */
  const successWaiters = new Set<() => void>();

  /**
   * Runs one step with a turn at the pool; a database fault becomes a store error, and is reported
   * once. The wait for a turn is given up when the deadline of `work` passes, and so is a read's
   * statement, which is cancelled; a write, once started, is let finish.
   */
  async function guarded<T>(
    kind: 'read' | 'write',
    step: (deadline: Deadline | undefined) => Promise<T>,
    work: Work,
  ): Promise<T> {
    const { deadline } = work;
    let release: (() => void) | undefined;
    let trial = false;
    try {
      if (health.unavailable) {
        if (trying)
          throw new StoreError(
            'unavailable',
            'the database is unavailable; another request is trying it',
          );
        trying = trial = true;
      }
      release = await gate.acquire(work);
      // It went away while this one waited for a turn: a trial of its own would make its wait
      // longer still.
      if (health.unavailable && !trial)
        throw new StoreError(
          'unavailable',
          'the database became unavailable while this request waited',
        );
      await ensureSchema();
      if (deadline?.expired === true) throw new DeadlinePassed();
      const result = await step(kind === 'read' ? deadline : undefined);
      health.succeeded(kind);
      for (const notify of successWaiters) notify();
      successWaiters.clear();
      return result;
    } catch (error) {
      const fault = postgresStoreError(error);
      if (fault === undefined) throw error;
      health.failed(fault);
      throw fault;
    } finally {
      if (trial) trying = false;
      release?.();
    }
  }

  try {
    await ensureSchema();
  } catch (error) {
    const fault = postgresStoreError(error);
    // Unreachable at start: the service starts, answers 503 and migrates once the database is back.
    // A pooler refusing the session settings is a configuration to fix (poolerRefusal), not an
    // outage.
    const refusal = poolerRefusal(error);
    if (refusal !== undefined) {
      await pool.end();
      throw refusal;
    }
    if (fault === undefined || fault.fault === 'corrupt' || fault.fault === 'read-only') {
      await pool.end();
      throw fault ?? error;
    }
    health.failed(fault);
  }

  /** While writes fail, readiness tries one that changes nothing, to see whether they work again. */
  const probeWrites = (): Promise<unknown> =>
    guarded(
      'write',
      () =>
        sql.transaction(async (session) => {
          for (const statement of WRITE_PROBE_STATEMENTS) await session.query(statement);
        }),
      UNBOUNDED_WORK,
    );

  return {
    query: (text, values, name, work = UNBOUNDED_WORK) =>
      guarded(
        kindOf(text),
        (deadline) => sql.statement(kindOf(text), text, values, name, deadline),
        work,
      ),
    writes: {
      query: (text, values, name) =>
        guarded('write', () => sql.statement('write', text, values, name), UNBOUNDED_WORK),
    },
    prepared: (name, text, kind = kindOf(text)) => {
      return (values, work) =>
        guarded(kind, (deadline) => sql.statement(kind, text, values, name, deadline), work);
    },
    transaction: (steps) => guarded('write', () => sql.transaction(steps), UNBOUNDED_WORK),
    async ping() {
      let timer: NodeJS.Timeout | undefined;
      let notify: (() => void) | undefined;
      const timeout = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS);
      });
      const check = health.awaitingWrite
        ? probeWrites()
        : guarded('read', () => sql.statement('read', 'SELECT 1'), UNBOUNDED_WORK);
      const signs: Promise<unknown>[] = [check];
      // With every connection busy and operations queued, the ping waits behind them; any of them
      // succeeding meanwhile shows as well that the database answers (saturation, not an outage).
      if (!health.awaitingWrite)
        signs.push(new Promise<void>((resolve) => successWaiters.add((notify = resolve))));
      const alive = Promise.race(signs).then(
        () => health.ready,
        () => false,
      );
      try {
        return await Promise.race([alive, timeout]);
      } finally {
        clearTimeout(timer);
        if (notify !== undefined) successWaiters.delete(notify);
      }
    },
    close: () => pool.end(),
  };
}

/** A connection's 'error' comes with its statement's failure (reported by guarded) or, idle, with the pool's 'error'. */
const ignoreReportedElsewhere = (): void => undefined;
/** How statements and transactions go to the server, directly or through a transaction pooler. */
interface SqlRunner {
  statement<R extends object>(
    kind: 'read' | 'write',
    text: string,
    values?: readonly SqlValue[],
    name?: string,
    deadline?: Deadline,
  ): Promise<SqlResult<R>>;
  transaction<T>(work: (session: SqlSession) => Promise<T>): Promise<T>;
}

/**
 * Through a transaction pooler (postgres-pooler.ts) a statement goes unnamed, and a write goes in
 * a transaction of its own, whose SET LOCAL bounds its lock waits as statement_timeout does on a
 * direct connection: two more round trips, the price of sharing server connections. A read waits
 * for no lock; its deadline cancels it.
 */
function sqlRunner(pool: pg.Pool, pooler: Pooler): SqlRunner {
  const begin = beginSql(pooler, {
    statementTimeoutMs: STATEMENT_TIMEOUT_MS,
    idleInTransactionMs: IDLE_IN_TRANSACTION_MS,
  });
  const transaction = <T>(work: (session: SqlSession) => Promise<T>): Promise<T> =>
    inTransaction(pool, begin, pooler, work);
  if (pooler === 'none')
    return {
      statement: (_kind, text, values, name, deadline) =>
        runQuery(pool, text, values, name, deadline, pooler),
      transaction,
    };
  return {
    statement: (kind, text, values, _name, deadline) =>
      kind === 'read'
        ? runQuery(pool, text, values, undefined, deadline, pooler)
        : transaction((session) => session.query(text, values)),
    transaction,
  };
}

/** A statement that only reads says nothing about whether writes work again (see StoreHealth). */
const kindOf = (text: string): 'read' | 'write' => (/^\s*SELECT\b/i.test(text) ? 'read' : 'write');

async function runQuery<R extends object>(
  runner: pg.Pool | pg.PoolClient,
  text: string,
  values: readonly SqlValue[] = [],
  name?: string,
  deadline?: Deadline,
  pooler: Pooler = 'none',
): Promise<SqlResult<R>> {
  if (deadline !== undefined && runner instanceof pg.Pool)
    return cancellableQuery(runner, deadline, text, values, name, pooler);
  const result = await runner.query<R & pg.QueryResultRow>({ text, values: [...values], name });
  return { rows: result.rows, rowCount: result.rowCount ?? 0 };
}

/**
 * A read that the server stops when `deadline` passes: pg_cancel_backend, sent on a connection of
 * its own (the pool may have none free), stops the statement even while it waits for a lock. The
 * connection it ran on is then closed rather than pooled, so that a cancellation arriving late can
 * never stop the next statement run on it.
 */
async function cancellableQuery<R extends object>(
  pool: pg.Pool,
  deadline: Deadline,
  text: string,
  values: readonly SqlValue[],
  name: string | undefined,
  pooler: Pooler,
): Promise<SqlResult<R>> {
  const client = await pool.connect();
  let cancelled = false;
  let failed = false;
  const forget = deadline.onExpiry(() => {
    cancelled = true;
    if (pooler === 'none') cancelBackend(pool, client);
    else cancelRequest(client);
  });
  try {
    const result = await client.query<R & pg.QueryResultRow>({ text, values: [...values], name });
    return { rows: result.rows, rowCount: result.rowCount ?? 0 };
  } catch (error) {
    failed = true;
    throw cancelled ? new DeadlinePassed() : error;
  } finally {
    forget();
    // A failed statement's connection is not pooled again, as pool.query does: after a client-side
    // time-out it still waits for that statement's result, and would hold up the next one behind
    // it.
    client.release(cancelled || failed);
  }
}

/** node-postgres keeps each connection's backend process id and cancel key, which its types do not declare. */
interface BackendClient {
  readonly processID?: unknown;
  readonly secretKey?: unknown;
  readonly host?: unknown;
  readonly port?: unknown;
}

/** The protocol's cancel request, which a pooler forwards to the server connection `client` is on. */
function cancelRequest(client: pg.PoolClient): void {
  const { processID, secretKey, host, port } = client as unknown as BackendClient;
  if (
    typeof processID === 'number' &&
    typeof secretKey === 'number' &&
    typeof host === 'string' &&
    typeof port === 'number'
  ) {
    sendCancelRequest(host, port, processID, secretKey);
  }
}

/** Asks the server to stop the statement running on `client`; a failure to ask is left to statement_timeout. */
function cancelBackend(pool: pg.Pool, client: pg.PoolClient): void {
  const pid = (client as unknown as BackendClient).processID;
  if (typeof pid !== 'number') return;
  const canceller = new pg.Client({
    ...pool.options,
    statement_timeout: undefined,
    query_timeout: CANCEL_TIMEOUT_MS,
    connectionTimeoutMillis: CANCEL_TIMEOUT_MS,
  });
  canceller.on('error', () => undefined);
  canceller
    .connect()
    .then(() => canceller.query('SELECT pg_cancel_backend($1)', [pid]))
    .catch(() => undefined)
    .finally(() => void canceller.end().catch(() => undefined));
}

/** Asking for a cancellation: a server that does not answer within this is left to statement_timeout. */
const CANCEL_TIMEOUT_MS = 1_000;

/** `begin` opens the transaction (beginSql); through a transaction pooler its statements go unnamed. */
async function inTransaction<T>(
  pool: pg.Pool,
  begin: string,
  pooler: Pooler,
  work: (session: SqlSession) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  // While checked out the pool no longer listens for this connection's errors; one that breaks
  // between two statements must fail the transaction, not crash the process.
  let broken: Error | undefined;
  const onError = (error: Error): void => {
    broken = error;
  };
  client.on('error', onError);
  try {
    await client.query(begin);
    const result = await work({
      query: (text, values, name) =>
        runQuery(client, text, values, pooler === 'none' ? name : undefined),
    });
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

function migrate(sql: SqlRunner, options: PostgresOptions): Promise<void> {
  const sessionOf = (runner: SqlSession): MigrationSession => ({
    dialect: 'postgres',
    exec: async (sql) => void (await runner.query(sql)),
    all: async <R extends object>(sql: string, params: readonly (string | number)[]) => [
      ...(await runner.query<R>(sql, params)).rows,
    ],
  });
  /** The locked transaction's session, which the seed writes through. */
  let locked: SqlSession | undefined;
  return runMigrations(
    {
      session: sessionOf({ query: (text, values) => sql.statement('read', text, values) }),
      locked: (work) =>
        sql.transaction(async (session) => {
          // Instances starting together queue here: one creates the schema, the others find it
          // done.
          await session.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
          locked = session;
          await work(sessionOf(session));
        }),
    },
    {
      service: options.service,
      migrations: options.migrations,
      seed: () => {
        if (locked === undefined)
          throw new Error('the seed runs only inside the migration transaction');
        return options.seed(locked);
      },
    },
  );
}
