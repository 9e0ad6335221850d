// Several instances as separate OS processes on one PostgreSQL database, as behind a load
// balancer: the bank invariant and the to-do id rule must hold across all of them.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { decodeTitle } from '../../src/todo/title.js';
import { get, json, postJson, send } from '../support/http.js';
import { runBounded, seededRandom } from '../support/load.js';
import { createTestDatabase, postgresSkip, type TestDatabase } from '../support/postgres.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { processSuiteUnless } from '../support/suite.js';

const INSTANCES = 4;
const ACCOUNTS: ReadonlyMap<string, number> = new Map([
  ['alpha', 20_000],
  ['beta', 10_000],
  ['gamma', 5_000],
  ['delta', 1_000],
  ['epsilon', 100],
]);
const WITHDRAWALS = 2_000;
const IN_FLIGHT = 100;

const skip = await postgresSkip();

async function startInstances(
  service: 'bank' | 'todo',
  database: TestDatabase,
): Promise<ServiceProcess[]> {
  const accounts = [...ACCOUNTS].map(([name, balance]) => `${name}=${balance}`).join(',');
  const args = [service, '--db', database.url, '--errors', 'unified', '--accounts', accounts];
  // Started all at once, so that they also race to migrate and seed the empty database.
  return Promise.all(Array.from({ length: INSTANCES }, () => startServiceProcess(args)));
}

const urlOf = (instances: readonly ServiceProcess[], index: number): string =>
  instances[index % instances.length]?.urls[0] as string;

/** Inside a describe: a fresh database and the instances on it, for the tests of that describe. */
function useInstances(service: 'bank' | 'todo'): {
  databaseUrl: string;
  instances: ServiceProcess[];
} {
  const fixture = { databaseUrl: '', instances: [] as ServiceProcess[] };
  let database: TestDatabase | undefined;
  before(async () => {
    database = await createTestDatabase();
    fixture.databaseUrl = database.url;
    fixture.instances = await startInstances(service, database);
  });
  after(async () => {
    await Promise.all(fixture.instances.map((instance) => instance.kill()));
    await database?.drop();
  });
  return fixture;
}

processSuiteUnless(skip, 'four bank instances on one PostgreSQL database', () => {
  const fixture = useInstances('bank');

  test('2,000 concurrent withdrawals: no overdraft, every acknowledged one applied, no refused one applied', async () => {
    const random = seededRandom(4);
    const names = [...ACCOUNTS.keys()];
    const plan = Array.from({ length: WITHDRAWALS }, () => ({
      account: names[random(0, names.length - 1)] as string,
      amount: random(1, 40),
    }));
    const answers = await runBounded(WITHDRAWALS, IN_FLIGHT, async (i) => {
      const { account, amount } = plan[i] as { account: string; amount: number };
      return send(urlOf(fixture.instances, i), {
        method: 'POST',
        path: `/withdraw/${account}/${amount}`,
      });
    });

    const acknowledged = new Map<string, number>(names.map((name) => [name, 0]));
    let refused = 0;
    for (const [i, answer] of answers.entries()) {
      const { account, amount } = plan[i] as { account: string; amount: number };
      if (answer.status === 200)
        acknowledged.set(account, (acknowledged.get(account) ?? 0) + amount);
      else if (answer.status === 400 && answer.text.includes('NOT_ENOUGH_MONEY')) refused += 1;
      else assert.fail(`withdrawal ${i} answered ${answer.status}: ${answer.text}`);
    }
    assert.ok(
      refused > 0 && refused < WITHDRAWALS,
      `a mix of refusals and successes (refused ${refused})`,
    );

    for (const instance of fixture.instances) {
      for (const [name, initial] of ACCOUNTS) {
        const answer = await get(instance.urls[0] as string, `/accounts/${name}`);
        assert.equal(answer.status, 200);
        const { balance } = json(answer) as { balance: number };
        assert.ok(balance >= 0, `${name} is not overdrawn`);
        assert.equal(
          balance,
          initial - (acknowledged.get(name) ?? 0),
          `${name}: initial minus acknowledged withdrawals`,
        );
      }
    }
  });
});

processSuiteUnless(skip, 'four to-do instances on one PostgreSQL database', () => {
  const fixture = useInstances('todo');

  test('concurrent POSTs and PUTs: unique ids, each POST one more than an existing id, nothing else stored', async () => {
    const POSTS = 400;
    const PUTS = 100;
    // PUT targets lie far apart, so a run of POSTs never counts up into one.
    const answers = await runBounded(POSTS + PUTS, 50, async (i) => {
      const url = urlOf(fixture.instances, i);
      const title = `item ${i}`;
      if (i % 5 === 0) {
        const id = 100_000 * (i / 5 + 1);
        return {
          kind: 'put' as const,
          title,
          answer: await postJson(url, `/todos/${id}`, JSON.stringify({ title }), 'PUT'),
        };
      }
      return {
        kind: 'post' as const,
        title,
        answer: await postJson(url, '/todos', JSON.stringify({ title })),
      };
    });

    const stored = new Map<number, string>([[1, 'Buy milk']]);
    const postIds: number[] = [];
    for (const { kind, title, answer } of answers) {
      assert.equal(answer.status, 201, `${kind} ${title}: ${answer.text}`);
      const { id } = json(answer) as { id: number };
      assert.ok(!stored.has(id), `id ${id} acknowledged twice`);
      stored.set(id, title);
      if (kind === 'post') postIds.push(id);
    }
    assert.equal(postIds.length, POSTS);
    for (const id of postIds)
      assert.ok(stored.has(id - 1), `POST id ${id} is one more than an id that existed`);

    const client = new pg.Client({ connectionString: fixture.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ id: string; title: string }>(
        'SELECT id::text AS id, title FROM todos',
      );
      const inDatabase = new Map(rows.map((row) => [Number(row.id), decodeTitle(row.title)]));
      assert.deepEqual(inDatabase, stored, 'exactly the acknowledged items are stored');
    } finally {
      await client.end();
    }

    for (const [index, instance] of fixture.instances.entries()) {
      const id = postIds[index] as number;
      assert.equal(
        (json(await get(instance.urls[0] as string, `/todos/${id}`)) as { title: string }).title,
        stored.get(id),
      );
    }
  });
});
