// Safe retries, as a client sees them, on each store: a keyed request runs once and its answer is
// replayed byte for byte with Idempotent-Replayed: true; the same key on another request is a 422;
// a bad key is a 400 that says what a good one looks like; refusals made before anything ran are
// not recorded. Every test also checks the bank's books: initial − journal = balance.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RunningServer } from '../../src/server.js';
import { get, json, send, type RawResponse } from '../support/http.js';
import { assertBooksBalance } from '../support/journal.js';
import { startTestServer, withServer } from '../support/server.js';
import { storeBackends, type FreshDatabase } from '../support/store-backends.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

const ACCOUNTS: ReadonlyMap<string, number> = new Map([
  ['alice', 100],
  ['bob', 5],
]);
const DAY_MS = 24 * 60 * 60 * 1000;
const INVALID_KEY = {
  code: 'IDEMPOTENCY_KEY_INVALID',
  message:
    'Idempotency-Key must be one key of 1 to 255 printable ASCII characters but the comma, sent once, as a quoted string such as "8e03978e-40d5-43e8-bc93-6894a57f9324" or bare',
};
const KEY_REUSED = {
  code: 'IDEMPOTENCY_KEY_REUSED',
  message: 'This Idempotency-Key was used for another request (another method, path or body)',
};

let keys = 0;
const freshKey = (): string => `key-${process.pid}-${++keys}`;

const withdraw = (
  url: string,
  path: string,
  key?: string | readonly string[],
): Promise<RawResponse> =>
  send(url, {
    method: 'POST',
    path,
    headers:
      key === undefined
        ? []
        : (typeof key === 'string' ? [key] : key).map((k) => ['Idempotency-Key', k] as const),
  });
const create = (url: string, body: string, key?: string): Promise<RawResponse> =>
  send(url, {
    method: 'POST',
    path: '/todos',
    headers: [
      ['Content-Type', 'application/json'],
      ...(key === undefined ? [] : [['Idempotency-Key', key] as const]),
    ],
    body,
  });
const balanceOf = async (url: string, account: string): Promise<number> =>
  (json(await get(url, `/accounts/${account}`)) as { balance: number }).balance;

function assertReplayOf(replay: RawResponse, first: RawResponse): void {
  assert.equal(replay.status, first.status);
  assert.equal(replay.headers['idempotent-replayed'], 'true');
  assert.equal(replay.headers['content-type'], first.headers['content-type']);
  assert.deepEqual(replay.body, first.body, 'the same body bytes');
}

for (const backend of await storeBackends()) {
  describe(
    `safe retries on ${backend.name}`,
    { skip: backend.skip, timeout: SUITE_TIMEOUT_MS },
    () => {
      let fresh: FreshDatabase;
      let bank: RunningServer;
      let unified: RunningServer;
      let todo: RunningServer;
      let strict: RunningServer;
      before(async () => {
        fresh = await backend.fresh();
        const idempotency = { required: false, ttlMs: DAY_MS };
        bank = await startTestServer({
          service: 'bank',
          db: fresh.db,
          accounts: ACCOUNTS,
          idempotency,
        });
        // A second instance on the same database, in the unified format.
        unified = await startTestServer({
          service: 'bank',
          db: fresh.db,
          accounts: ACCOUNTS,
          errors: 'unified',
          idempotency,
        });
        todo = await startTestServer({ service: 'todo', db: fresh.db, idempotency });
        strict = await startTestServer({
          service: 'bank',
          db: fresh.db,
          accounts: ACCOUNTS,
          idempotency: { required: true, ttlMs: DAY_MS },
        });
      });
      after(async () => {
        await Promise.all([bank, unified, todo, strict].map((server) => server?.close()));
        await assertBooksBalance(fresh.db, ACCOUNTS);
        await fresh?.drop();
      });

      test('a keyed withdrawal runs once; the same request again replays its status and body bytes with Idempotent-Replayed: true', async () => {
        const key = freshKey();
        const start = await balanceOf(bank.url, 'alice');
        const first = await withdraw(bank.url, '/withdraw/alice/7', `"${key}"`);
        assert.equal(first.status, 200);
        assert.equal(first.headers['idempotent-replayed'], undefined);
        assert.deepEqual(json(first), { account: 'alice', balance: start - 7 });
        assertReplayOf(await withdraw(bank.url, '/withdraw/alice/7', `"${key}"`), first);
        // The bare form names the same key, and another instance replays it from the database.
        assertReplayOf(await withdraw(unified.url, '/withdraw/alice/7', key), first);
        assert.equal(await balanceOf(bank.url, 'alice'), start - 7);
      });

      test('the same key with another amount is 422 in the active format and changes nothing', async () => {
        const key = freshKey();
        assert.equal((await withdraw(bank.url, '/withdraw/alice/3', key)).status, 200);
        const start = await balanceOf(bank.url, 'alice');
        const reused = await withdraw(bank.url, '/withdraw/alice/4', key);
        assert.equal(reused.status, 422);
        assert.deepEqual(json(reused), { detail: KEY_REUSED });
        const reusedUnified = await withdraw(unified.url, '/withdraw/bob/3', key);
        assert.equal(reusedUnified.status, 422);
        assert.deepEqual(json(reusedUnified), { error: KEY_REUSED });
        assert.equal(await balanceOf(bank.url, 'alice'), start);
        assert.equal(await balanceOf(bank.url, 'bob'), 5);
      });

      test('an unknown account (404) and insufficient funds (500 default, 400 unified) are recorded, and replayed in the format of the instance that replays them', async () => {
        const unknownKey = freshKey();
        const unknown = await withdraw(bank.url, '/withdraw/zed/1', unknownKey);
        assert.equal(unknown.status, 404);
        assert.deepEqual(json(unknown), { detail: 'Account zed not found' });
        assertReplayOf(await withdraw(bank.url, '/withdraw/zed/1', unknownKey), unknown);

        const poorKey = freshKey();
        const refused = await withdraw(bank.url, '/withdraw/bob/6', poorKey);
        assert.equal(refused.status, 500);
        assert.equal(refused.text, 'Internal Server Error');
        assertReplayOf(await withdraw(bank.url, '/withdraw/bob/6', poorKey), refused);
        // The outcome is recorded, not the answer: an instance in another format answers it in its
        // own.
        const inUnified = await withdraw(unified.url, '/withdraw/bob/6', poorKey);
        assert.equal(inUnified.status, 400);
        assert.equal(inUnified.headers['idempotent-replayed'], 'true');
        assert.deepEqual(json(inUnified), {
          error: { code: 'NOT_ENOUGH_MONEY', message: 'Balance is 5, you asked for 6' },
        });

        const unifiedKey = freshKey();
        const unifiedRefusal = await withdraw(unified.url, '/withdraw/bob/6', unifiedKey);
        assert.equal(unifiedRefusal.status, 400);
        assert.deepEqual(json(unifiedRefusal), {
          error: { code: 'NOT_ENOUGH_MONEY', message: 'Balance is 5, you asked for 6' },
        });
        assertReplayOf(await withdraw(unified.url, '/withdraw/bob/6', unifiedKey), unifiedRefusal);
        assert.equal(await balanceOf(bank.url, 'bob'), 5);
      });

      test('a 422 validation failure is not recorded: the key then runs a valid request', async () => {
        const key = freshKey();
        const invalid = await withdraw(bank.url, '/withdraw/alice/x', key);
        assert.equal(invalid.status, 422);
        assert.equal(invalid.headers['idempotent-replayed'], undefined);
        const start = await balanceOf(bank.url, 'alice');
        const valid = await withdraw(bank.url, '/withdraw/alice/1', key);
        assert.equal(valid.status, 200);
        assert.equal(valid.headers['idempotent-replayed'], undefined);
        assert.equal(await balanceOf(bank.url, 'alice'), start - 1);
      });

      test('an invalid key (two fields, or a comma that folded two into one line) is 400 in the active format, says what a valid key looks like, and changes nothing', async () => {
        const start = await balanceOf(bank.url, 'alice');
        const invalid: readonly (readonly string[])[] = [
          [''],
          ['""'],
          ['"open'],
          ['"a"b'],
          ['k'.repeat(256)],
          ['caf\u00e9'],
          ['a', 'b'],
          ['a, b'],
        ];
        for (const values of invalid) {
          const answer = await withdraw(bank.url, '/withdraw/alice/1', values);
          assert.equal(answer.status, 400, JSON.stringify(values));
          assert.deepEqual(json(answer), { detail: INVALID_KEY }, JSON.stringify(values));
        }
        const unifiedAnswer = await withdraw(unified.url, '/withdraw/alice/1', '"open');
        assert.equal(unifiedAnswer.status, 400);
        assert.deepEqual(json(unifiedAnswer), { error: INVALID_KEY });
        assert.equal(await balanceOf(bank.url, 'alice'), start);
      });

      test('with --require-idempotency-key a withdrawal without a key is 400 and changes nothing; with one it runs', async () => {
        const start = await balanceOf(strict.url, 'alice');
        const missing = await withdraw(strict.url, '/withdraw/alice/1');
        assert.equal(missing.status, 400);
        assert.deepEqual(json(missing), {
          detail: {
            code: 'IDEMPOTENCY_KEY_REQUIRED',
            message:
              'This operation needs an Idempotency-Key header: one key of 1 to 255 printable ASCII characters but the comma, such as "8e03978e-40d5-43e8-bc93-6894a57f9324"',
          },
        });
        assert.equal(await balanceOf(strict.url, 'alice'), start);
        assert.equal((await withdraw(strict.url, '/withdraw/alice/1', freshKey())).status, 200);
        assert.equal((await get(strict.url, '/accounts/alice')).status, 200, 'reads need no key');
      });

      test('a keyed to-do create makes one item: the replay has the same id, another body with the key is 422', async () => {
        const key = freshKey();
        const first = await create(todo.url, '{"title":"once"}', key);
        assert.equal(first.status, 201);
        const { id } = json(first) as { id: number };
        assert.deepEqual(json(first), { id, title: 'once', done: false });
        assertReplayOf(await create(todo.url, '{"title":"once"}', key), first);
        const reused = await create(todo.url, '{"title":"twice"}', key);
        assert.equal(reused.status, 422);
        assert.deepEqual(json(reused), { detail: KEY_REUSED });
        const next = await create(todo.url, '{"title":"next"}');
        assert.equal(
          (json(next) as { id: number }).id,
          id + 1,
          'the replay and the refusal created nothing',
        );
        const invalid = await create(todo.url, '{"title":"x"}', '"open');
        assert.equal(invalid.status, 400);
      });

      test("/openapi.json documents the Idempotency-Key header and its answers on both operations, with the contract's codes kept", async () => {
        type Operation = {
          parameters?: { name: string; in: string; required: boolean }[];
          responses: Record<string, { headers?: object }>;
        };
        const operation = async (url: string, path: string): Promise<Operation> =>
          (json(await get(url, '/openapi.json')) as { paths: Record<string, { post: Operation }> })
            .paths[path]?.post as Operation;
        for (const [url, path, codes] of [
          [bank.url, '/withdraw/{account}/{amount}', ['200', '404', '422', '500']],
          [unified.url, '/withdraw/{account}/{amount}', ['200', '400', '404', '422']],
          [todo.url, '/todos', ['201', '422']],
        ] as const) {
          const doc = await operation(url, path);
          const header = doc.parameters?.find((p) => p.name === 'Idempotency-Key');
          assert.deepEqual(
            { in: header?.in, required: header?.required },
            { in: 'header', required: false },
            path,
          );
          assert.deepEqual(
            Object.keys(doc.responses)
              .filter((k) => /^\d{3}$/.test(k))
              .sort(),
            codes,
            `${path}: the contract's codes`,
          );
          assert.ok(
            doc.responses['4XX'] !== undefined,
            `${path}: the key's 400 and 409 as a range`,
          );
          assert.ok(
            doc.responses[codes[0]]?.headers !== undefined,
            `${path}: Idempotent-Replayed on the success`,
          );
        }
        const required = await operation(strict.url, '/withdraw/{account}/{amount}');
        assert.equal(
          required.parameters?.find((p) => p.name === 'Idempotency-Key')?.required,
          true,
        );
      });

      test('a keyed to-do create refused by validation (422) is not recorded', async () => {
        const key = freshKey();
        assert.equal((await create(todo.url, '{"done":true}', key)).status, 422);
        const created = await create(todo.url, '{"title":"after a 422"}', key);
        assert.equal(created.status, 201);
        assert.equal(created.headers['idempotent-replayed'], undefined);
      });
    },
  );
}

describe('logging a replayed failure', { timeout: SUITE_TIMEOUT_MS }, () => {
  test("insufficient funds in the default format is logged once, as the reference's unhandled failure; its replays log nothing", async () => {
    const lines: string[] = [];
    await withServer({ service: 'bank', logLines: lines, accessLog: false }, async (url) => {
      const key = freshKey();
      const first = await withdraw(url, '/withdraw/bob/6', key);
      assert.equal(first.status, 500);
      for (let i = 0; i < 3; i++)
        assertReplayOf(await withdraw(url, '/withdraw/bob/6', key), first);
    });
    const unhandled = lines.filter((line) => line.includes('"msg":"unhandled failure"'));
    assert.equal(unhandled.length, 1, lines.join('\n'));
    assert.match(unhandled[0] ?? '', /Balance is 5, you asked for 6/);
  });
});
