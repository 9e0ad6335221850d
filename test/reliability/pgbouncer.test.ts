// Behind PgBouncer in pool_mode = transaction, with its default settings otherwise, as an operator
// puts it in front of the database (docs/storage.md#behind-pgbouncer): with --db-pooler transaction
// every feature works through it, and without, the service refuses to start with one line.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { json, send, type RawResponse } from '../support/http.js';
import { assertBooksBalance } from '../support/journal.js';
import {
  assertExactlyOnce,
  planWithdrawals,
  withdrawUntilDefinitive,
} from '../support/keyed-load.js';
import { seededRandom } from '../support/load.js';
import { pgbouncerSkip, startPgBouncer, type PgBouncer } from '../support/pgbouncer.js';
import { createTestDatabase, postgresSkip, type TestDatabase } from '../support/postgres.js';
import { runCli, startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { processSuiteUnless } from '../support/suite.js';

const skip = (await postgresSkip()) || pgbouncerSkip();

const INSTANCES = 4;
const ACCOUNTS: ReadonlyMap<string, number> = new Map([
  ['rich', 1_000_000],
  ['poor', 2_000],
]);
const WITHDRAWALS = 600;
const CLIENTS = 16;
const KILLS = 4;

/** One fresh database, and PgBouncer in front of the test server, for the tests of a suite. */
function usePooledDatabase(): { database: TestDatabase; pgbouncer: PgBouncer; url: string } {
  const fixture = {} as { database: TestDatabase; pgbouncer: PgBouncer; url: string };
  before(async () => {
    fixture.database = await createTestDatabase();
    fixture.pgbouncer = await startPgBouncer();
    fixture.url = fixture.pgbouncer.urlOf(fixture.database.url);
  });
  after(async () => {
    await fixture.pgbouncer?.stop();
    await fixture.database?.drop();
  });
  return fixture;
}

/** The to-do service's arguments through the pooler in transaction mode, access log off. */
const pooledTodo = (url: string, options: readonly string[]): string[] => [
  'todo',
  '--db',
  url,
  '--db-pooler',
  'transaction',
  '--access-log',
  'off',
  ...options,
];

/**
 * A to-do service through the pooler in transaction mode, and a session of the test's own on the
 * database, which takes the locks the service's statements then wait for.
 */
function useLockScene(
  fixture: { database: TestDatabase; url: string },
  options: readonly string[],
): { url: () => string; locker: () => pg.Client; waiting: () => Promise<number> } {
  let instance: ServiceProcess | undefined;
  let locker: pg.Client | undefined;
  before(async () => {
    instance = await startServiceProcess(pooledTodo(fixture.url, options));
    locker = new pg.Client({ connectionString: fixture.database.url });
    // The database is dropped with FORCE at the end, which ends this session.
    locker.on('error', () => undefined);
    await locker.connect();
  });
  after(async () => {
    await instance?.kill();
    await locker?.end();
  });
  const lockerOf = (): pg.Client => {
    assert.ok(locker !== undefined, 'the locking session is open');
    return locker;
  };
  return {
    url: () => instance?.urls[0] as string,
    locker: lockerOf,
    /** Sessions of the service that wait for a lock now. */
    waiting: async () => {
      const { rows } = await lockerOf().query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()",
      );
      return rows[0]?.n ?? 0;
    },
  };
}

processSuiteUnless(skip, 'four bank instances through one PgBouncer in transaction mode', () => {
  const fixture = usePooledDatabase();
  const instances: ServiceProcess[] = [];
  const accounts = [...ACCOUNTS].map(([name, balance]) => `${name}=${balance}`).join(',');
  // Limits far above this load: the limiter decides every request through the pooler, and admits
  // it.
  const startBank = (): Promise<ServiceProcess> =>
    startServiceProcess([
      'bank',
      '--db',
      fixture.url,
      '--db-pooler',
      'transaction',
      '--errors',
      'unified',
      '--accounts',
      accounts,
      '--access-log',
      'off',
      '--rate-limit',
      'writes=100000/s:100000,reads=100000/s:100000',
    ]);
  after(() => Promise.all(instances.map((instance) => instance.kill())));

  test('keyed withdrawals keep the books and apply once through kill -9 of instances and a restart of PgBouncer', async (t) => {
    // Started at once, so that they race to migrate and seed the empty database through the pooler.
    instances.push(...(await Promise.all(Array.from({ length: INSTANCES }, startBank))));
    const plan = planWithdrawals(WITHDRAWALS, [...ACCOUNTS.keys()], 91, 'pooled');
    let clientsDone = false;
    let kills = 0;
    let restarts = 0;
    const random = seededRandom(9);
    const chaos = (async () => {
      while (!clientsDone || kills < KILLS) {
        await new Promise((resolve) => setTimeout(resolve, random(100, 300)));
        if (kills === 2 && restarts === 0) {
          await fixture.pgbouncer.restart();
          restarts += 1;
        }
        const slot = kills % INSTANCES;
        await (instances[slot] as ServiceProcess).kill('SIGKILL');
        kills += 1;
        instances[slot] = await startBank();
      }
    })();
    const run = withdrawUntilDefinitive(plan, CLIENTS, () =>
      instances.map((instance) => instance.urls[0] as string),
    );
    const { answers, retries } = await run.finally(() => (clientsDone = true));
    await chaos;

    const ok = answers.filter((answer) => answer.status === 200).length;
    t.diagnostic(
      `${kills} kills, ${restarts} PgBouncer restart; ${ok} withdrawals answered 200, ${answers.length - ok} refused; ${retries} retries`,
    );
    assert.equal(restarts, 1, 'PgBouncer was restarted mid-load');
    assert.ok(retries > 0, 'the kills and the restart made clients retry');
    assert.ok(ok > 0 && ok < answers.length, 'both successes and refusals');
    await assertExactlyOnce(instances[0]?.urls[0] as string, ACCOUNTS, plan, answers);
    await assertBooksBalance({ kind: 'postgres', url: fixture.database.url }, ACCOUNTS);
  });

  /** Each instance's /readyz status. */
  const readiness = (): Promise<number[]> =>
    Promise.all(
      instances.map(
        async (instance) =>
          (await send(instance.urls[0] as string, { method: 'GET', path: '/readyz' })).status,
      ),
    );
  /** Each instance's /readyz status once all answer `status`, or 15 s have passed. */
  const until = async (status: number): Promise<number[]> => {
    const deadline = Date.now() + 15_000;
    let statuses = await readiness();
    while (statuses.some((s) => s !== status) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      statuses = await readiness();
    }
    return statuses;
  };

  test('unkeyed withdrawals through the pooler are group-committed and keep the books', async () => {
    // The scene above restarted PgBouncer: an instance that saw it and has served nothing since
    // still holds its database for unavailable, and while one request tries it the others are
    // answered 503 at once (docs/storage.md). Ready again, as a load balancer waits for, it is not.
    assert.deepEqual(await until(200), [200, 200, 200, 200]);
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        send(instances[i % INSTANCES]?.urls[0] as string, {
          method: 'POST',
          path: '/withdraw/rich/3',
        }),
      ),
    );
    assert.deepEqual(
      new Set(answers.map((answer) => answer.status)),
      new Set([200]),
      answers
        .filter((answer) => answer.status !== 200)
        .map((answer) => `${answer.status} ${answer.text}`)
        .join('\n'),
    );
    await assertBooksBalance({ kind: 'postgres', url: fixture.database.url }, ACCOUNTS);
  });

  test('every instance is ready through the pooler, unready while it is down, and ready again after', async () => {
    assert.deepEqual(await readiness(), [200, 200, 200, 200]);
    await fixture.pgbouncer.halt();
    assert.deepEqual(await until(503), [503, 503, 503, 503]);
    await fixture.pgbouncer.start();
    assert.deepEqual(await until(200), [200, 200, 200, 200]);
  });
});

processSuiteUnless(skip, 'to-do instances through one PgBouncer in transaction mode', () => {
  const fixture = usePooledDatabase();
  const instances: ServiceProcess[] = [];
  before(async () => {
    const args = pooledTodo(fixture.url, [
      '--rate-limit',
      'reads=1/s:3',
      '--trust-proxy',
      '127.0.0.1',
    ]);
    instances.push(...(await Promise.all([startServiceProcess(args), startServiceProcess(args)])));
  });
  after(() => Promise.all(instances.map((instance) => instance.kill())));
  const urlOf = (i: number): string => instances[i % instances.length]?.urls[0] as string;
  const put = (i: number, path: string, title: string, ifMatch: string): Promise<RawResponse> =>
    send(urlOf(i), {
      method: 'PUT',
      path,
      headers: [
        ['Content-Type', 'application/json'],
        ['If-Match', ifMatch],
      ],
      body: JSON.stringify({ title }),
    });

  test('conditional writes through the pooler: If-Match of the current version 200, of a replaced one 412', async () => {
    const created = await send(urlOf(0), {
      method: 'POST',
      path: '/todos',
      headers: [['Content-Type', 'application/json']],
      body: JSON.stringify({ title: 'first' }),
    });
    assert.equal(created.status, 201);
    const { id } = json(created) as { id: number };
    const first = created.headers.etag as string;
    assert.ok(first !== undefined, 'a created item carries its ETag');
    const replaced = await put(1, `/todos/${id}`, 'second', first);
    assert.equal(replaced.status, 200, replaced.text);
    assert.equal((await put(0, `/todos/${id}`, 'lost update', first)).status, 412);
  });

  test('rate limits through the pooler hold across instances: a burst of 3 reads, then 429', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      statuses.push(
        (
          await send(urlOf(i), {
            method: 'GET',
            path: '/todos/1',
            headers: [['X-Forwarded-For', '203.0.113.9']],
          })
        ).status,
      );
    }
    assert.deepEqual(statuses, [200, 200, 200, 429, 429]);
  });
});

processSuiteUnless(skip, 'a service behind PgBouncer without --db-pooler', () => {
  const fixture = usePooledDatabase();

  test('refuses to start, with one line naming --db-pooler transaction', async () => {
    const child = runCli(['bank', '--port', '0', '--db', fixture.url]);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    assert.equal(code, 2);
    assert.match(
      stderr,
      /^error: the PostgreSQL server refused the startup parameter \w+: it is a pooler \(PgBouncer\?\); start with --db-pooler transaction/,
    );
    assert.equal(stderr.trimEnd().split('\n').length, 1, `one line: ${stderr}`);
  });
});

processSuiteUnless(skip, 'a read past its deadline through PgBouncer in transaction mode', () => {
  const fixture = usePooledDatabase();
  const DEADLINE_MS = 300;
  const scene = useLockScene(fixture, ['--deadline-ms', String(DEADLINE_MS)]);

  test('is answered 504, and its statement is cancelled on the server through the pooler (no statement_timeout holds it there)', async () => {
    const { waiting } = scene;
    const locker = scene.locker();
    const url = scene.url();
    assert.equal((await send(url, { method: 'GET', path: '/todos/1' })).status, 200);
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE todos IN ACCESS EXCLUSIVE MODE');
    try {
      const read = send(url, { method: 'GET', path: '/todos/1' });
      await new Promise((resolve) => setTimeout(resolve, DEADLINE_MS / 2));
      assert.equal(await waiting(), 1, 'the read waits for the lock');
      assert.equal((await read).status, 504);
      const until = Date.now() + 3_000;
      while ((await waiting()) > 0) {
        assert.ok(
          Date.now() < until,
          'the statement still waits on the server: it was not cancelled',
        );
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      await locker.query('ROLLBACK');
    }
    assert.equal(
      (await send(url, { method: 'GET', path: '/todos/1' })).status,
      200,
      'the service reads on',
    );
  });
});

processSuiteUnless(skip, 'a write waiting for a lock through PgBouncer in transaction mode', () => {
  const fixture = usePooledDatabase();
  const scene = useLockScene(fixture, []);
  const { waiting } = scene;

  /** The answer to `write`, sent while item 1's row is locked; its statement must not outlive it on the server. */
  async function whileLocked(write: () => Promise<RawResponse>): Promise<RawResponse> {
    const locker = scene.locker();
    await locker.query('BEGIN');
    await locker.query('SELECT 1 FROM todos WHERE id = 1 FOR UPDATE');
    try {
      const answer = await write();
      // The server ended the statement at statement_timeout: nothing of it waits any more. A
      // statement given up only by the client would wait on the server until the lock is gone.
      assert.equal(await waiting(), 0, 'the write still waits for the lock on the server');
      return answer;
    } finally {
      await locker.query('ROLLBACK');
    }
  }

  const putItem = (headers: readonly (readonly [string, string])[]): Promise<RawResponse> =>
    send(scene.url(), {
      method: 'PUT',
      path: '/todos/1',
      headers: [['Content-Type', 'application/json'], ...headers],
      body: '{"title":"locked out"}',
    });

  test('a single write is ended by the server at statement_timeout: 503 with Retry-After', async () => {
    const answer = await whileLocked(() => putItem([]));
    assert.equal(answer.status, 503, answer.text);
    assert.ok(answer.headers['retry-after'] !== undefined);
  });

  test('a write in a transaction (a keyed PUT) is ended by the server at statement_timeout too', async () => {
    const answer = await whileLocked(() => putItem([['Idempotency-Key', 'locked-out-1']]));
    assert.equal(answer.status, 503, answer.text);
  });
});
