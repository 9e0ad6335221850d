// PostgreSQL for tests: a fresh database per suite (or per test), so that runs never see each
// other's data. When no server answers, suites are skipped with the reason; with REQUIRE_POSTGRES=1
// (as in CI) a failing test says so instead, so that a missing server cannot pass for green.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import pg from 'pg';

export const TEST_DATABASE_URL =
  process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const PROBE_TIMEOUT_MS = 3_000;

export interface TestDatabase {
  readonly url: string;
  drop(): Promise<void>;
}

let probed: Promise<string | undefined> | undefined;

/** Undefined when the server answers; otherwise why not. */
function probe(): Promise<string | undefined> {
  probed ??= withAdmin(async (client) => {
    await client.query('SELECT 1');
  }).then(
    () => undefined,
    (error: unknown) =>
      `PostgreSQL at ${redacted(TEST_DATABASE_URL)} is unreachable: ${error instanceof Error ? error.message : String(error)}`,
  );
  return probed;
}

/**
 * The `skip` option for suites that need PostgreSQL: false when it answers, else the reason. With
 * REQUIRE_POSTGRES=1 an unreachable server also registers one failing test that says why.
 */
export async function postgresSkip(): Promise<string | false> {
  const problem = await probe();
  if (problem === undefined) return false;
  if (process.env.REQUIRE_POSTGRES === '1') {
    test('PostgreSQL is reachable (REQUIRE_POSTGRES=1)', () => {
      throw new Error(`${problem}. Start it, or set TEST_DATABASE_URL.`);
    });
  }
  return `${problem} (set REQUIRE_POSTGRES=1 to fail instead of skipping)`;
}

/** A new, empty database on the test server with a random name; `drop` removes it. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `test_${process.pid}_${randomBytes(6).toString('hex')}`;
  await withAdmin((client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    // FORCE ends connections a crashed or killed service may have left behind.
    drop: () =>
      withAdmin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(
        () => undefined,
      ),
  };
}

/** The name of a test database on the server, as SQL and pg_stat_activity know it. */
export const databaseNameOf = (database: TestDatabase): string =>
  new URL(database.url).pathname.slice(1);

/** Runs `body` with a database of its own, dropped afterwards whatever happens. */
export async function withTestDatabase(
  body: (database: TestDatabase) => Promise<void>,
): Promise<void> {
  const database = await createTestDatabase();
  try {
    await body(database);
  } finally {
    await database.drop();
  }
}

/**
 * Tries `write` until it fails as the server refusing writes; the first tries may meet sessions
 * that setReadOnly ended, which fail as outages instead. Fails the test if none is refused.
 */
export async function untilRefusedAsReadOnly(write: () => Promise<unknown>): Promise<Error> {
  for (let tries = 0; tries < 50; tries++) {
    const error = await write().then(
      () => undefined,
      (failure: unknown) => failure,
    );
    if (error instanceof Error && (error as { code?: unknown }).code === 'STORE_READ_ONLY')
      return error;
  }
  return assert.fail('no write was refused as read-only');
}

/** Calls `attempt` until it answers true, as after setReadOnly the first tries may meet ended sessions. */
export async function untilTrue(attempt: () => Promise<boolean>): Promise<boolean> {
  for (let tries = 0; tries < 50; tries++) if (await attempt()) return true;
  return false;
}

/**
 * Makes the server refuse writes in `database` (default_transaction_read_only), or take them again,
 * for new sessions; the sessions open now are ended, so that a pool opens new ones that obey.
 */
export async function setReadOnly(database: TestDatabase, on: boolean): Promise<void> {
  const name = databaseNameOf(database);
  await withAdmin(async (client) => {
    await client.query(
      `ALTER DATABASE ${name} ${on ? 'SET default_transaction_read_only = on' : 'RESET default_transaction_read_only'}`,
    );
    await client.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [name],
    );
  });
}

/**
 * Resolves once a session of the client's database other than its own waits for a lock, as
 * pg_stat_activity reports it; fails after `boundMs`. `client` must not be in a transaction:
 * pg_stat_activity is read once per transaction.
 */
export async function untilWaitingForLock(client: pg.Client, boundMs = 10_000): Promise<void> {
  const started = Date.now();
  for (;;) {
    const { rows } = await client.query(
      "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'",
    );
    if (rows.length > 0) return;
    if (Date.now() - started > boundMs)
      assert.fail(`no session waited for a lock within ${boundMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function withAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({
    connectionString: TEST_DATABASE_URL,
    connectionTimeoutMillis: PROBE_TIMEOUT_MS,
  });
  client.on('error', () => undefined); // reported through the failing query instead
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

function redacted(url: string): string {
  const parsed = new URL(url);
  if (parsed.password !== '') parsed.password = '***';
  return parsed.toString();
}

/**
 * Makes one write of `db` fail as PostgreSQL refuses writes in a read-only transaction: the store
 * then knows writes fail, as on a read-only server, without changing the server. Table v must
 * exist.
 */
export async function refuseOneWrite(db: {
  transaction(
    work: (session: { query(text: string): Promise<unknown> }) => Promise<unknown>,
  ): Promise<unknown>;
}): Promise<unknown> {
  return db
    .transaction(async (session) => {
      await session.query('SET TRANSACTION READ ONLY');
      await session.query('INSERT INTO v (x) VALUES (2)');
    })
    .then(
      () => assert.fail('a write in a read-only transaction went through'),
      (error: unknown) => error,
    );
}
