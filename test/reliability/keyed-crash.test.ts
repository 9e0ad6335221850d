// Exactly once through crashes: clients send keyed withdrawals to two instances on one database
// while one instance after the other is killed with kill -9 and restarted; every client sends its
// request again, same key, after a lost connection, a 503 or a 409, until it gets a definitive
// answer. At the end each withdrawal answered 200 was applied once and no other was applied.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertBooksBalance } from '../support/journal.js';
import {
  assertExactlyOnce,
  planWithdrawals,
  withdrawUntilDefinitive,
} from '../support/keyed-load.js';
import { seededRandom } from '../support/load.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { storeBackends, type FreshDatabase } from '../support/store-backends.js';
import { PROCESS_SUITE_TIMEOUT_MS } from '../support/time-limits.js';

const ACCOUNTS: ReadonlyMap<string, number> = new Map([
  ['rich', 1_000_000],
  ['poor', 2_000],
]);
const WITHDRAWALS = 600;
const CLIENTS = 16;
const KILLS_MIN = 6;
const KILL_INTERVAL_MS_MIN = 80;
const KILL_INTERVAL_MS_MAX = 250;

function startBank(db: FreshDatabase): Promise<ServiceProcess> {
  const spec =
    db.db.kind === 'postgres'
      ? db.db.url
      : db.db.kind === 'sqlite'
        ? `sqlite:${db.db.path}`
        : 'memory';
  const accounts = [...ACCOUNTS].map(([name, balance]) => `${name}=${balance}`).join(',');
  return startServiceProcess([
    'bank',
    '--db',
    spec,
    '--errors',
    'unified',
    '--accounts',
    accounts,
    '--access-log',
    'off',
  ]);
}

for (const backend of await storeBackends()) {
  describe(
    `keyed withdrawals through kill -9 of two instances, on ${backend.name}`,
    { skip: backend.skip, timeout: PROCESS_SUITE_TIMEOUT_MS },
    () => {
      let fresh: FreshDatabase;
      const instances: ServiceProcess[] = [];
      before(async () => {
        fresh = await backend.fresh();
        instances.push(await startBank(fresh), await startBank(fresh));
      });
      after(async () => {
        await Promise.all(instances.map((instance) => instance.kill()));
        await fresh?.drop();
      });

      test('every balance = initial − the withdrawals answered 200; each request replays; a key with another amount is 422', async (t) => {
        const plan = planWithdrawals(
          WITHDRAWALS,
          [...ACCOUNTS.keys()],
          backend.name === 'sqlite' ? 81 : 82,
          'crash',
        );
        let clientsDone = false;
        let kills = 0;
        const random = seededRandom(8);
        // Kills alternate between the two instances, and go on until the clients are done.
        const killer = (async () => {
          while (!clientsDone || kills < KILLS_MIN) {
            await new Promise((resolve) =>
              setTimeout(resolve, random(KILL_INTERVAL_MS_MIN, KILL_INTERVAL_MS_MAX)),
            );
            const slot = kills % 2;
            await (instances[slot] as ServiceProcess).kill('SIGKILL');
            kills += 1;
            instances[slot] = await startBank(fresh);
          }
        })();
        const run = withdrawUntilDefinitive(plan, CLIENTS, () =>
          instances.map((instance) => instance.urls[0] as string),
        );
        const { answers, retries } = await run.finally(() => (clientsDone = true));
        await killer;

        const ok = answers.filter((a) => a.status === 200).length;
        t.diagnostic(
          `${kills} kills; ${ok} withdrawals answered 200, ${answers.length - ok} refused; ${retries} retries`,
        );
        assert.ok(retries > 0, 'the kills made clients retry');
        assert.ok(ok > 0 && ok < answers.length, 'both successes and refusals');
        await assertExactlyOnce(instances[0]?.urls[0] as string, ACCOUNTS, plan, answers);
        await assertBooksBalance(fresh.db, ACCOUNTS);
      });
    },
  );
}
