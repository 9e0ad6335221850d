// kill -9 in the middle of a stream of writes, restart on the same database, and check that no
// acknowledged write was lost and nothing refused was applied. A write whose answer the crash
// swallowed may or may not have happened: the balance must be explained by the acknowledged
// withdrawals plus some subset of those, and by nothing else.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { get, json, postJson, send, type RawResponse } from '../support/http.js';
import { seededRandom, subsetSums } from '../support/load.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { storeBackends, type FreshDatabase } from '../support/store-backends.js';
import { processSuiteUnless } from '../support/suite.js';

const CYCLES = 10;
const WORKERS = 16;
/** The kill comes this long after the first acknowledgement of a cycle. */
const KILL_DELAY_MS_MIN = 30;
const KILL_DELAY_MS_MAX = 200;
const ACCOUNTS: ReadonlyMap<string, number> = new Map([
  ['rich', 1_000_000],
  ['poor', 300],
]);

type Outcome = 'acknowledged' | 'refused' | 'in-doubt';

interface Withdrawal {
  readonly account: string;
  readonly amount: number;
  readonly outcome: Outcome;
}

interface TodoWrite {
  readonly title: string;
  readonly id?: number;
}

/** What a request came to: an answer, no connection at all (so not applied), or a lost answer. */
async function attempt(
  call: () => Promise<RawResponse>,
): Promise<RawResponse | 'not-sent' | 'in-doubt'> {
  try {
    return await call();
  } catch (error) {
    return (error as { code?: unknown }).code === 'ECONNREFUSED' ? 'not-sent' : 'in-doubt';
  }
}

function start(db: FreshDatabase): Promise<ServiceProcess> {
  const spec =
    db.db.kind === 'postgres'
      ? db.db.url
      : db.db.kind === 'sqlite'
        ? `sqlite:${db.db.path}`
        : 'memory';
  const accounts = [...ACCOUNTS].map(([name, balance]) => `${name}=${balance}`).join(',');
  return startServiceProcess(
    ['all', '--db', spec, '--errors', 'unified', '--accounts', accounts],
    2,
  );
}

/** Writes from several workers until the process dies; the kill lands shortly after the first acknowledgement. */
async function writeUntilKilled(
  service: ServiceProcess,
  cycle: number,
  random: (min: number, max: number) => number,
) {
  const [todoUrl, bankUrl] = service.urls as [string, string];
  const withdrawals: Withdrawal[] = [];
  const todos: TodoWrite[] = [];
  let sequence = 0;
  let firstAck: (() => void) | undefined;
  const acknowledgedOnce = new Promise<void>((resolve) => (firstAck = resolve));

  const worker = async (): Promise<void> => {
    for (;;) {
      const n = sequence++;
      if (n % 2 === 0) {
        const account = random(0, 3) === 0 ? 'poor' : 'rich';
        const amount = random(1, 60);
        const answer = await attempt(() =>
          send(bankUrl, { method: 'POST', path: `/withdraw/${account}/${amount}` }),
        );
        if (answer === 'not-sent' || answer === 'in-doubt') {
          withdrawals.push({
            account,
            amount,
            outcome: answer === 'not-sent' ? 'refused' : 'in-doubt',
          });
          return;
        }
        if (answer.status === 200) withdrawals.push({ account, amount, outcome: 'acknowledged' });
        else if (answer.status === 400) withdrawals.push({ account, amount, outcome: 'refused' });
        else assert.fail(`withdrawal answered ${answer.status}: ${answer.text}`);
      } else {
        const title = `cycle ${cycle} write ${n}`;
        const answer = await attempt(() => postJson(todoUrl, '/todos', JSON.stringify({ title })));
        if (answer === 'not-sent' || answer === 'in-doubt') return;
        assert.equal(answer.status, 201, answer.text);
        todos.push({ title, id: (json(answer) as { id: number }).id });
      }
      firstAck?.();
    }
  };
  const workers = Promise.all(Array.from({ length: WORKERS }, worker));
  await acknowledgedOnce;
  await new Promise((resolve) => setTimeout(resolve, random(KILL_DELAY_MS_MIN, KILL_DELAY_MS_MAX)));
  await service.kill('SIGKILL');
  await workers;
  return { withdrawals, todos };
}

async function balances(bankUrl: string): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  for (const name of ACCOUNTS.keys()) {
    const answer = await get(bankUrl, `/accounts/${name}`);
    assert.equal(answer.status, 200);
    found.set(name, (json(answer) as { balance: number }).balance);
  }
  return found;
}

for (const backend of await storeBackends()) {
  processSuiteUnless(backend.skip, `kill -9 while writing, on ${backend.name}`, () => {
    let fresh: FreshDatabase;
    before(async () => {
      fresh = await backend.fresh();
    });
    after(async () => {
      await fresh?.drop();
    });

    test(`${CYCLES} kill/restart cycles lose no acknowledged write and apply nothing refused`, async (t) => {
      const random = seededRandom(backend.name === 'sqlite' ? 9 : 10);
      const acknowledgedTodos = new Map<number, string>();
      let before = new Map(ACCOUNTS);
      let lastCycle: Awaited<ReturnType<typeof writeUntilKilled>> | undefined;
      let inDoubtTotal = 0;
      let acknowledgedTotal = 0;

      // Each start checks what the previous cycle left behind; the last start only checks.
      for (let cycle = 1; cycle <= CYCLES + 1; cycle++) {
        const service = await start(fresh);
        const [todoUrl, bankUrl] = service.urls as [string, string];
        const now = await balances(bankUrl);
        for (const [name, balance] of now) {
          const mine = lastCycle?.withdrawals.filter((w) => w.account === name) ?? [];
          const acknowledged = mine.filter((w) => w.outcome === 'acknowledged');
          const inDoubt = mine.filter((w) => w.outcome === 'in-doubt').map((w) => w.amount);
          const taken = (before.get(name) ?? Number.NaN) - balance;
          const takenAcknowledged = acknowledged.reduce((sum, w) => sum + w.amount, 0);
          assert.ok(
            subsetSums(inDoubt).has(taken - takenAcknowledged),
            `${name} after cycle ${cycle - 1}: ${taken} taken, ${takenAcknowledged} acknowledged, in doubt ${inDoubt.join('+') || 'none'}`,
          );
          acknowledgedTotal += acknowledged.length;
          inDoubtTotal += inDoubt.length;
        }
        for (const { id, title } of lastCycle?.todos ?? []) {
          assert.ok(
            id !== undefined && !acknowledgedTodos.has(id),
            `to-do id ${id} acknowledged only once`,
          );
          acknowledgedTodos.set(id, title);
        }
        for (const [id, title] of acknowledgedTodos) {
          const answer = await get(todoUrl, `/todos/${id}`);
          assert.equal(
            answer.status,
            200,
            `acknowledged to-do ${id} (${title}) is there after cycle ${cycle - 1}`,
          );
          assert.equal((json(answer) as { title: string }).title, title);
        }
        before = now;
        if (cycle > CYCLES) {
          await service.kill();
          break;
        }
        lastCycle = await writeUntilKilled(service, cycle, random);
      }
      t.diagnostic(
        `${CYCLES} kills: ${acknowledgedTotal} withdrawals and ${acknowledgedTodos.size} to-dos acknowledged, ${inDoubtTotal} withdrawals in doubt`,
      );
      assert.ok(
        acknowledgedTotal > 0 && acknowledgedTodos.size > 0,
        'writes were acknowledged before the kills',
      );
      assert.ok(inDoubtTotal > 0, 'some kills landed with requests in flight');
    });
  });
}
