// PostgreSQL goes away and comes back (a TCP proxy in front of it is cut and restored): requests
// get a 503 in the active error format within a bounded time, /readyz says not ready, the process
// survives, and it serves again by itself once the database is back.
//
// SQLite has no counterpart: it is a file opened inside the process, with no connection to lose.
// Its failures are local disk errors (full, I/O), which are not an outage to wait out.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { get, json, postJson, send, type RawResponse } from '../support/http.js';
import {
  createTestDatabase,
  postgresSkip,
  TEST_DATABASE_URL,
  type TestDatabase,
} from '../support/postgres.js';
import { runCli, startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { startTcpProxy, type CutMode, type TcpProxy } from '../support/tcp-proxy.js';
import { processSuiteUnless } from '../support/suite.js';

const ANSWER_BOUND_MS = 3_000;
const RECOVERY_BOUND_MS = 5_000;
const DEFAULT_503 = { detail: 'Service Unavailable' };
const UNIFIED_503 = { error: { code: 'HTTP_503', message: 'Service Unavailable' } };

const skip = await postgresSkip();

function throughProxy(databaseUrl: string, proxy: TcpProxy): string {
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  return url.toString();
}

async function timed(
  call: () => Promise<RawResponse>,
): Promise<{ answer: RawResponse; ms: number }> {
  const started = performance.now();
  const answer = await call();
  return { answer, ms: performance.now() - started };
}

async function waitUntilReady(url: string): Promise<number> {
  const started = performance.now();
  for (;;) {
    const answer = await get(url, '/readyz');
    if (answer.status === 200) return performance.now() - started;
    if (performance.now() - started > RECOVERY_BOUND_MS)
      assert.fail(`not ready ${RECOVERY_BOUND_MS} ms after the database came back`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function assertUnavailable(answer: RawResponse, body: unknown, what: string): void {
  assert.equal(answer.status, 503, `${what}: ${answer.text}`);
  assert.deepEqual(json(answer), body, what);
  assert.equal(answer.headers['retry-after'], '1', what);
}

processSuiteUnless(skip, 'PostgreSQL goes away and comes back', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let todo: ServiceProcess;
  let bank: ServiceProcess;
  const todoUrl = (): string => todo.urls[0] as string;
  const bankUrl = (): string => bank.urls[0] as string;

  before(async () => {
    database = await createTestDatabase();
    const target = new URL(TEST_DATABASE_URL);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    const db = throughProxy(database.url, proxy);
    todo = await startServiceProcess(['todo', '--db', db]);
    bank = await startServiceProcess(['bank', '--db', db, '--errors', 'unified']);
  });
  after(async () => {
    await Promise.all([todo?.kill(), bank?.kill()]);
    await proxy?.close();
    await database?.drop();
  });

  const outage = (mode: CutMode) => async (t: { diagnostic(message: string): void }) => {
    assert.equal(
      (await send(bankUrl(), { method: 'POST', path: '/withdraw/alice/1' })).status,
      200,
    );
    assert.equal((await postJson(todoUrl(), '/todos', '{"title":"before"}')).status, 201);

    proxy.cut(mode);
    const calls: { what: string; body: unknown; call: () => Promise<RawResponse> }[] = [];
    for (let i = 0; i < 12; i++) {
      calls.push({
        what: 'bank read',
        body: UNIFIED_503,
        call: () => get(bankUrl(), '/accounts/alice'),
      });
      calls.push({
        what: 'withdrawal',
        body: UNIFIED_503,
        call: () => send(bankUrl(), { method: 'POST', path: '/withdraw/alice/1' }),
      });
      calls.push({ what: 'to-do read', body: DEFAULT_503, call: () => get(todoUrl(), '/todos/1') });
      calls.push({
        what: 'to-do create',
        body: DEFAULT_503,
        call: () => postJson(todoUrl(), '/todos', '{"title":"during"}'),
      });
    }
    calls.push({ what: 'bank /readyz', body: UNIFIED_503, call: () => get(bankUrl(), '/readyz') });
    calls.push({ what: 'to-do /readyz', body: DEFAULT_503, call: () => get(todoUrl(), '/readyz') });
    const results = await Promise.all(
      calls.map(async ({ what, body, call }) => ({ what, body, ...(await timed(call)) })),
    );
    let slowest = 0;
    for (const { what, body, answer, ms } of results) {
      assertUnavailable(answer, body, what);
      assert.ok(ms < ANSWER_BOUND_MS, `${what} answered after ${Math.round(ms)} ms`);
      slowest = Math.max(slowest, ms);
    }
    assert.equal((await get(bankUrl(), '/healthz')).status, 200, 'the process itself lives');
    assert.equal((await get(todoUrl(), '/healthz')).status, 200, 'the process itself lives');

    await proxy.restore();
    const [bankReady, todoReady] = await Promise.all([
      waitUntilReady(bankUrl()),
      waitUntilReady(todoUrl()),
    ]);
    assert.equal(
      (await send(bankUrl(), { method: 'POST', path: '/withdraw/alice/1' })).status,
      200,
    );
    assert.equal((await postJson(todoUrl(), '/todos', '{"title":"after"}')).status, 201);
    t.diagnostic(
      `${mode}: ${results.length} requests all 503, slowest ${Math.round(slowest)} ms; ready again after ${Math.round(bankReady)} ms (bank), ${Math.round(todoReady)} ms (to-do)`,
    );
  };

  test(
    'connections torn down: 503 in both formats within 3 s, then served again without a restart',
    outage('reset'),
  );
  test(
    'connections gone silent: 503 in both formats within 3 s, then served again without a restart',
    outage('silent'),
  );
  test(
    'connections refused (server down, host up): 503 in both formats within 3 s, then served again without a restart',
    outage('refuse'),
  );

  test('the outages were logged, and neither process died', async () => {
    assert.equal(await Promise.race([todo.exited, bank.exited, Promise.resolve('alive')]), 'alive');
    for (const service of [todo, bank]) {
      await service.logged('database unavailable: answering 503 until it answers again');
      await service.logged('database available again');
      assert.doesNotMatch(service.output(), /unhandled failure|Uncaught/);
    }
  });
});

processSuiteUnless(skip, 'PostgreSQL unreachable at start', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let bank: ServiceProcess | undefined;
  before(async () => {
    database = await createTestDatabase();
    const target = new URL(TEST_DATABASE_URL);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
  });
  after(async () => {
    await bank?.kill();
    await proxy?.close();
    await database?.drop();
  });

  test('the service starts, answers 503 and migrates once the database answers', async () => {
    proxy.cut('reset');
    bank = await startServiceProcess(['bank', '--db', throughProxy(database.url, proxy)]);
    const url = bank.urls[0] as string;
    assertUnavailable(await get(url, '/readyz'), DEFAULT_503, '/readyz');
    assertUnavailable(await get(url, '/accounts/alice'), DEFAULT_503, 'read');
    await proxy.restore();
    await waitUntilReady(url);
    assert.deepEqual(json(await get(url, '/accounts/alice')), { account: 'alice', balance: 100 });
  });

  test('a database that answers but does not exist stops the start with exit code 1 and the reason', async () => {
    const missing = new URL(database.url);
    missing.pathname = '/no_such_database_here';
    const child = runCli(['bank', '--port', '0', '--db', missing.toString()]);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    assert.equal(code, 1);
    assert.match(stderr, /database "no_such_database_here" does not exist/);
  });
});
