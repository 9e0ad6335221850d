// Hostile input, generated from a fixed seed so a failure can be replayed: random methods, paths,
// media types and bodies (random bytes, broken and deep JSON). No request may crash the server,
// get a 5xx that is not the deliberate kind, leak a stack or a file name, or change data when it
// is rejected.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { get, json, send, type RawResponse } from '../support/http.js';
import { seededRandom } from '../support/load.js';
import { withServer } from '../support/server.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

/** A unit-interval source from the shared seeded generator, so that every run sends the same requests. */
function random(seed: number): () => number {
  const integer = seededRandom(seed);
  return () => integer(0, 0xffffffff) / 0x100000000;
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE'];
const SEGMENTS = [
  'todos',
  'v2',
  'oops',
  'done',
  'accounts',
  'withdraw',
  'limits',
  'docs',
  'crash',
  'secret',
  '1',
  '-1',
  '0',
  '%2F',
  '%00',
  '%FF',
  '%ZZ',
  '9007199254740992',
  '1e3',
  '%F0%9F%98%80',
  '..',
  '.',
  '',
  'abc',
  '+5',
  '1_0',
  '%20',
  'alice',
  'bob',
];
const TYPES = [
  undefined,
  'application/json',
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/vnd.x+json',
  'APPLICATION/JSON; charset=latin1',
  '',
];
const BODIES = [
  '{"title":"ok"}',
  '{"title": 1}',
  '{',
  '[]',
  'null',
  '{"title":"x","done":NaN}',
  '"\\ud800"',
  '{"title":"\\u0000"}',
  `{"a":${'['.repeat(600)}}`,
  '{"title":"x"} x',
  '\u0000\u0001',
  '{"title":"😀","done":"yes"}',
  '{"__proto__":{"polluted":1},"title":"p"}',
];

function pick<T>(next: () => number, items: readonly T[]): T {
  return items[Math.floor(next() * items.length)] as T;
}

function randomRequest(next: () => number): {
  method: string;
  path: string;
  type: string | undefined;
  body: Buffer | undefined;
} {
  const depth = 1 + Math.floor(next() * 4);
  const path = `/${Array.from({ length: depth }, () => pick(next, SEGMENTS)).join('/')}${next() < 0.2 ? '/' : ''}${next() < 0.2 ? '?q=%2F&x' : ''}`;
  let body: Buffer | undefined;
  const roll = next();
  if (roll < 0.4) body = Buffer.from(pick(next, BODIES), 'utf8');
  else if (roll < 0.6)
    body = Buffer.from(
      Array.from({ length: Math.floor(next() * 64) }, () => Math.floor(next() * 256)),
    );
  return { method: pick(next, METHODS), path, type: pick(next, TYPES), body };
}

const ALLOWED = new Set([200, 201, 204, 307, 400, 401, 403, 404, 405, 409, 422]);

function assertClean(res: RawResponse, what: string): void {
  assert.ok(ALLOWED.has(res.status) || res.status === 500, `${what}: status ${res.status}`);
  assert.doesNotMatch(
    res.text,
    /\n\s+at |\.[jt]s:\d+|node_modules|SQLITE|sqlite|SELECT |UPDATE |Error:/,
    `${what}: leaked internals: ${res.text.slice(0, 200)}`,
  );
}

describe('hostile input', { timeout: SUITE_TIMEOUT_MS }, () => {
  test('2,000 random requests to the to-do service: no crash, no leak, no 500', () =>
    withServer({ service: 'todo' }, async (url) => {
      const next = random(20261121);
      for (let i = 0; i < 2000; i++) {
        const req = randomRequest(next);
        const what = `#${i} ${req.method} ${req.path}`;
        const res = await send(url, {
          method: req.method,
          path: req.path,
          headers: req.type === undefined ? [] : [['Content-Type', req.type]],
          body: req.body,
        });
        assertClean(res, what);
        assert.notEqual(res.status, 500, `${what}: 500`);
      }
      assert.ok([200, 404].includes((await get(url, '/todos/1')).status), 'still answering');
    }));

  test('2,000 random requests to the bank: the only 500 is /crash, balances only go down by acknowledged withdrawals', () =>
    withServer({ service: 'bank', errors: 'unified' }, async (url) => {
      const next = random(424242);
      let aliceBalance = 100;
      let crashes = 0;
      for (let i = 0; i < 2000; i++) {
        const req = randomRequest(next);
        const what = `#${i} ${req.method} ${req.path}`;
        const res = await send(url, {
          method: req.method,
          path: req.path,
          headers: req.type === undefined ? [] : [['Content-Type', req.type]],
          body: req.body,
        });
        assertClean(res, what);
        if (res.status === 500) {
          assert.match(req.path, /^\/crash\/?(\?|$)/, `${what}: 500`);
          crashes += 1;
        }
        if (
          res.status === 200 &&
          req.method === 'POST' &&
          req.path.startsWith('/withdraw/alice/')
        ) {
          aliceBalance = (json(res) as { balance: number }).balance;
        }
      }
      assert.equal(
        (json(await get(url, '/accounts/alice')) as { balance: number }).balance,
        aliceBalance,
      );
      assert.ok(crashes > 0, 'the generator reached /crash, so the rule above was put to the test');
    }));

  test('a rejected write changes nothing: 300 invalid bodies for PUT /todos/1 leave it as it was', () =>
    withServer({ service: 'todo' }, async (url) => {
      const before = (await get(url, '/todos/1')).text;
      const next = random(7);
      for (let i = 0; i < 300; i++) {
        const body =
          next() < 0.5
            ? Buffer.from(
                pick(
                  next,
                  BODIES.filter(
                    (b) =>
                      !b.startsWith('{"title":"ok"}') &&
                      !b.includes('"title":"😀"') &&
                      !b.includes('"title":"\\u0000"') &&
                      !b.includes('"title":"p"'),
                  ),
                ),
              )
            : Buffer.from(
                Array.from({ length: 1 + Math.floor(next() * 40) }, () => Math.floor(next() * 256)),
              );
        const res = await send(url, {
          method: 'PUT',
          path: '/todos/1',
          headers: [['Content-Type', 'application/json']],
          body,
        });
        assert.ok(
          res.status === 400 || res.status === 422,
          `#${i}: ${res.status} for ${body.toString('hex')}`,
        );
      }
      assert.equal((await get(url, '/todos/1')).text, before);
    }));
});
