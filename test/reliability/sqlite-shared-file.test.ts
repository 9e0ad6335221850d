// Several processes on one SQLite file (docs/storage.md says this is safe): withdrawals stay atomic
// and to-do ids unique when two instances of a service share a file.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { get, json, postJson, send } from '../support/http.js';
import { runBounded, seededRandom } from '../support/load.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { PROCESS_SUITE_TIMEOUT_MS } from '../support/time-limits.js';

async function withInstances(
  service: 'bank' | 'todo',
  extra: readonly string[],
  body: (urls: string[]) => Promise<void>,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'shared-sqlite-'));
  const args = [
    service,
    '--db',
    `sqlite:${join(dir, `${service}.sqlite`)}`,
    '--errors',
    'unified',
    ...extra,
  ];
  const instances: ServiceProcess[] = [];
  try {
    // One after the other: the first creates and seeds the file, the second finds it ready.
    for (let i = 0; i < 2; i++) instances.push(await startServiceProcess(args));
    await body(instances.map((instance) => instance.urls[0] as string));
  } finally {
    await Promise.all(instances.map((instance) => instance.kill()));
    rmSync(dir, { recursive: true, force: true });
  }
}

test(
  'two bank processes on one SQLite file: no overdraft, every acknowledged withdrawal applied, both agree',
  { timeout: PROCESS_SUITE_TIMEOUT_MS },
  () =>
    withInstances('bank', ['--accounts', 'alpha=3000,beta=500'], async (urls) => {
      const random = seededRandom(11);
      const plan = Array.from({ length: 1000 }, () => ({
        account: random(0, 1) === 0 ? 'alpha' : 'beta',
        amount: random(1, 9),
      }));
      const answers = await runBounded(plan.length, 60, (i) => {
        const { account, amount } = plan[i] as { account: string; amount: number };
        return send(urls[i % 2] as string, {
          method: 'POST',
          path: `/withdraw/${account}/${amount}`,
        });
      });
      const taken = new Map([
        ['alpha', 0],
        ['beta', 0],
      ]);
      answers.forEach((res, i) => {
        const { account, amount } = plan[i] as { account: string; amount: number };
        assert.ok(
          res.status === 200 || res.status === 400,
          `withdrawal ${i}: ${res.status} ${res.text}`,
        );
        if (res.status === 200) taken.set(account, (taken.get(account) ?? 0) + amount);
      });
      for (const [account, initial] of [
        ['alpha', 3000],
        ['beta', 500],
      ] as const) {
        for (const url of urls) {
          const balance = (json(await get(url, `/accounts/${account}`)) as { balance: number })
            .balance;
          assert.equal(
            balance,
            initial - (taken.get(account) ?? 0),
            `${account} as ${url} sees it`,
          );
          assert.ok(balance >= 0);
        }
      }
    }),
);

test(
  'two to-do processes on one SQLite file: concurrent creates get unique ids, exactly the acknowledged ones',
  { timeout: PROCESS_SUITE_TIMEOUT_MS },
  () =>
    withInstances('todo', [], async (urls) => {
      const answers = await runBounded(400, 60, (i) =>
        postJson(urls[i % 2] as string, '/todos', JSON.stringify({ title: `t${i}` })),
      );
      const ids = answers.map((res) => {
        assert.equal(res.status, 201);
        return (json(res) as { id: number }).id;
      });
      assert.equal(new Set(ids).size, 400);
      assert.deepEqual(
        [...ids].sort((a, b) => a - b),
        Array.from({ length: 400 }, (_, i) => i + 2),
      );
      for (const [i, id] of ids.entries()) {
        if (i % 40 !== 0) continue;
        assert.deepEqual(json(await get(urls[(i + 1) % 2] as string, `/todos/${id}`)), {
          id,
          title: `t${i}`,
          done: false,
        });
      }
    }),
);
