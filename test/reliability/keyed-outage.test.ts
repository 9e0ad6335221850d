// Exactly once through database outages: two instances reach PostgreSQL through a TCP proxy that is
// cut (connections torn down, or gone silent) and restored again and again while clients send
// keyed withdrawals and retry them, same key, after a lost connection, a 503 or a 409, until each
// gets a definitive answer. A withdrawal whose commit was in flight when the database went away
// is either replayed or run by the retry: never both, never neither.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertBooksBalance } from '../support/journal.js';
import {
  assertExactlyOnce,
  planWithdrawals,
  withdrawUntilDefinitive,
} from '../support/keyed-load.js';
import {
  createTestDatabase,
  postgresSkip,
  TEST_DATABASE_URL,
  type TestDatabase,
} from '../support/postgres.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { PROCESS_SUITE_TIMEOUT_MS } from '../support/time-limits.js';

const ACCOUNTS: ReadonlyMap<string, number> = new Map([
  ['rich', 1_000_000],
  ['poor', 2_000],
]);
const WITHDRAWALS = 1_500;
const CLIENTS = 16;
const OUTAGES = 4;
const OUTAGE_MS = 1_200;
const BETWEEN_OUTAGES_MS = 400;

const skip = await postgresSkip();
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe(
  'keyed withdrawals through database outages, two instances on PostgreSQL',
  { skip, timeout: PROCESS_SUITE_TIMEOUT_MS },
  () => {
    let database: TestDatabase;
    let proxy: TcpProxy;
    const instances: ServiceProcess[] = [];
    before(async () => {
      database = await createTestDatabase();
      const target = new URL(TEST_DATABASE_URL);
      proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
      const url = new URL(database.url);
      url.hostname = '127.0.0.1';
      url.port = String(proxy.port);
      const accounts = [...ACCOUNTS].map(([name, balance]) => `${name}=${balance}`).join(',');
      const args = [
        'bank',
        '--db',
        url.toString(),
        '--errors',
        'unified',
        '--accounts',
        accounts,
        '--access-log',
        'off',
      ];
      instances.push(await startServiceProcess(args), await startServiceProcess(args));
    });
    after(async () => {
      await Promise.all(instances.map((instance) => instance.kill()));
      await proxy?.close();
      await database?.drop();
    });

    test('every balance = initial − the withdrawals answered 200; each request replays; a key with another amount is 422', async (t) => {
      const plan = planWithdrawals(WITHDRAWALS, [...ACCOUNTS.keys()], 83, 'outage');
      const run = withdrawUntilDefinitive(plan, CLIENTS, () =>
        instances.map((instance) => instance.urls[0] as string),
      );
      let clientsDone = false;
      const finished = run.finally(() => (clientsDone = true));
      // Outages go on while the clients work: each one must catch requests in flight.
      let outages = 0;
      for (; outages < OUTAGES && !clientsDone; outages++) {
        await pause(BETWEEN_OUTAGES_MS);
        proxy.cut(outages % 2 === 0 ? 'reset' : 'silent');
        await pause(OUTAGE_MS);
        await proxy.restore();
      }
      const { answers, retries } = await finished;
      const ok = answers.filter((a) => a.status === 200).length;
      t.diagnostic(
        `${outages} outages; ${ok} withdrawals answered 200, ${answers.length - ok} refused; ${retries} retries`,
      );
      assert.ok(outages >= 2, `the clients were still at work through ${outages} outages`);
      assert.ok(retries > 0, 'the outages made clients retry');
      await assertExactlyOnce(instances[0]?.urls[0] as string, ACCOUNTS, plan, answers);
      await assertBooksBalance({ kind: 'postgres', url: database.url }, ACCOUNTS);
      for (const instance of instances)
        assert.doesNotMatch(instance.output(), /unhandled failure|Uncaught/);
    });
  },
);
