// Cross-origin protection (src/features/cross-origin/cross-origin.ts), as Go 1.25's CrossOriginProtection
// decides: the decision on its own, then on real servers in every format, with CORS and alone; a
// refused write changes nothing, and a request with neither header is unchanged.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { readConfig } from '../../src/config.js';
import { crossOrigin } from '../../src/features/cross-origin/feature.js';
import { settingsOf } from '../../src/features/feature.js';
import { parseCorsOrigins, type CorsPolicy } from '../../src/features/cors/cors.js';
import { refusesCrossOrigin } from '../../src/features/cross-origin/cross-origin.js';
import type { ErrorFormat } from '../../src/http/render.js';
import { get, send, type RawResponse } from '../support/http.js';
import { withServer } from '../support/server.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

const LISTED = 'http://127.0.0.1:5173';
const UNLISTED = 'http://127.0.0.1:9999';
const POLICY = parseCorsOrigins(LISTED) as CorsPolicy;
const FORMATS: readonly ErrorFormat['name'][] = ['default', 'unified', 'problem'];

type Headers = readonly (readonly [string, string])[];

const withdraw = (url: string, headers: Headers): Promise<RawResponse> =>
  send(url, { method: 'POST', path: '/withdraw/alice/1', headers });
const balance = async (url: string): Promise<number> =>
  (JSON.parse((await get(url, '/accounts/alice')).text) as { balance: number }).balance;

function codeOf(format: ErrorFormat['name'], res: RawResponse): string | undefined {
  const body = JSON.parse(res.text) as {
    detail?: { code: string };
    error?: { code: string };
    code?: string;
  };
  return format === 'default'
    ? body.detail?.code
    : format === 'unified'
      ? body.error?.code
      : body.code;
}

describe('the decision, as Go 1.25 takes it', () => {
  const policy = { trusted: new Set([LISTED]) };
  const host = '127.0.0.1:8001';
  const cases: [string, string, Record<string, string>, boolean][] = [
    ['a cross-site POST', 'POST', { 'sec-fetch-site': 'cross-site', origin: UNLISTED, host }, true],
    [
      'a same-site PUT (a sibling origin)',
      'PUT',
      { 'sec-fetch-site': 'same-site', origin: UNLISTED, host },
      true,
    ],
    [
      'a cross-site DELETE without Origin',
      'DELETE',
      { 'sec-fetch-site': 'cross-site', host },
      true,
    ],
    [
      'a cross-site PATCH',
      'PATCH',
      { 'sec-fetch-site': 'cross-site', origin: UNLISTED, host },
      true,
    ],
    [
      'a cross-site POST from a trusted origin',
      'POST',
      { 'sec-fetch-site': 'cross-site', origin: LISTED, host },
      false,
    ],
    [
      'a same-origin POST',
      'POST',
      { 'sec-fetch-site': 'same-origin', origin: UNLISTED, host },
      false,
    ],
    ['a POST the user made (none)', 'POST', { 'sec-fetch-site': 'none', host }, false],
    [
      'a cross-site GET, HEAD or OPTIONS',
      'GET',
      { 'sec-fetch-site': 'cross-site', origin: UNLISTED, host },
      false,
    ],
    [
      'a cross-site HEAD',
      'HEAD',
      { 'sec-fetch-site': 'cross-site', origin: UNLISTED, host },
      false,
    ],
    [
      'a cross-site OPTIONS',
      'OPTIONS',
      { 'sec-fetch-site': 'cross-site', origin: UNLISTED, host },
      false,
    ],
    [
      'an old browser: an Origin neither trusted nor the host',
      'POST',
      { origin: UNLISTED, host },
      true,
    ],
    ['an old browser: Origin null', 'POST', { origin: 'null', host }, true],
    ['an old browser: the service’s own origin', 'POST', { origin: `http://${host}`, host }, false],
    ['an old browser: a trusted origin', 'POST', { origin: LISTED, host }, false],
    ['neither header (curl, a server)', 'POST', { host }, false],
  ];
  for (const [what, method, headers, refused] of cases) {
    test(`${what}: ${refused ? 'refused' : 'let through'}`, () =>
      assert.equal(refusesCrossOrigin(policy, method, headers), refused));
  }
});

test('the protection is on by default, trusts the --cors-origin origins, and is turned off with --cross-origin-protection off or SVC_CROSS_ORIGIN_PROTECTION=off', () => {
  const protection = (argv: readonly string[], env: NodeJS.ProcessEnv) =>
    settingsOf(readConfig(argv, env).features, crossOrigin);
  assert.deepEqual(protection([], {}), { trusted: new Set() });
  assert.deepEqual(protection(['--cors-origin', LISTED], {}), { trusted: new Set([LISTED]) });
  assert.deepEqual(protection(['--cross-origin-protection', 'on'], {}), { trusted: new Set() });
  assert.equal(protection(['--cross-origin-protection', 'off'], {}), undefined);
  assert.equal(
    protection(['--cross-origin-protection=off', '--cors-origin', LISTED], {}),
    undefined,
  );
  // The variable keeps the values the switch it was took.
  assert.equal(protection([], { SVC_CROSS_ORIGIN_PROTECTION: 'off' }), undefined);
  assert.equal(protection([], { SVC_CROSS_ORIGIN_PROTECTION: '0' }), undefined);
  assert.notEqual(protection([], { SVC_CROSS_ORIGIN_PROTECTION: '1' }), undefined);
  assert.throws(() => readConfig(['--cross-origin-protection=yes'], {}), {
    message: '--cross-origin-protection must be on or off, not "yes"',
  });
  assert.throws(() => readConfig([], { SVC_CROSS_ORIGIN_PROTECTION: 'yes' }), {
    message: '--cross-origin-protection must be on or off, not "yes"',
  });
});

describe('cross-site writes refused', { timeout: SUITE_TIMEOUT_MS }, () => {
  for (const format of FORMATS) {
    test(`${format}: a write a browser marks cross-site is 403 CROSS_ORIGIN_REFUSED before any work, and changes nothing`, () =>
      withServer({ service: 'bank', errors: format, cors: POLICY }, async (url) => {
        for (const headers of [
          [
            ['Sec-Fetch-Site', 'cross-site'],
            ['Origin', UNLISTED],
          ],
          [
            ['Sec-Fetch-Site', 'same-site'],
            ['Origin', UNLISTED],
          ],
          [['Origin', UNLISTED]],
        ] as const) {
          const res = await withdraw(url, headers);
          assert.equal(res.status, 403, JSON.stringify(headers));
          assert.equal(codeOf(format, res), 'CROSS_ORIGIN_REFUSED');
          assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/);
          assert.equal(res.headers.vary, 'Origin');
          assert.equal(res.headers['access-control-allow-origin'], undefined);
        }
        // Before any work: not even the body is read (a malformed one is not a 422).
        const malformed = await send(url, {
          method: 'POST',
          path: '/withdraw/alice/x',
          headers: [['Sec-Fetch-Site', 'cross-site']],
        });
        assert.equal(malformed.status, 403);
        assert.equal(await balance(url), 100, 'nothing was withdrawn');
      }));
  }

  test('a listed origin, the same origin, the user, and a client without either header write as before', () =>
    withServer({ service: 'bank', cors: POLICY }, async (url) => {
      const host = new URL(url).host;
      const allowed: Headers[] = [
        [
          ['Sec-Fetch-Site', 'same-site'],
          ['Origin', LISTED],
        ],
        [['Origin', LISTED]],
        [
          ['Sec-Fetch-Site', 'same-origin'],
          ['Origin', `http://${host}`],
        ],
        [['Origin', `http://${host}`]],
        [['Sec-Fetch-Site', 'none']],
        [],
      ];
      for (const headers of allowed)
        assert.equal((await withdraw(url, headers)).status, 200, JSON.stringify(headers));
      assert.equal(await balance(url), 100 - allowed.length);
      const read = await send(url, {
        method: 'GET',
        path: '/accounts/alice',
        headers: [
          ['Sec-Fetch-Site', 'cross-site'],
          ['Origin', UNLISTED],
        ],
      });
      assert.equal(read.status, 200, 'a read is never refused');
    }));

  test('on by default: a cross-site form or fetch() write from another site is refused, and the balance is untouched', () =>
    withServer({ service: 'bank' }, async (url) => {
      for (const headers of [
        [['Sec-Fetch-Site', 'cross-site']],
        [['Origin', UNLISTED]],
        [
          ['Sec-Fetch-Site', 'cross-site'],
          ['Origin', UNLISTED],
          ['Content-Type', 'application/x-www-form-urlencoded'],
        ],
      ] as Headers[])
        assert.equal((await withdraw(url, headers)).status, 403, JSON.stringify(headers));
      assert.equal(await balance(url), 100);
      // Neither header (curl, a server): let through, as the reference lets it.
      assert.equal((await withdraw(url, [])).status, 200);
      assert.equal(await balance(url), 99);
    }));

  test('turned off (--cross-origin-protection off): a cross-site write runs as the reference runs it', () =>
    withServer({ service: 'bank', crossOriginProtection: false }, async (url) => {
      assert.equal(
        (
          await withdraw(url, [
            ['Sec-Fetch-Site', 'cross-site'],
            ['Origin', UNLISTED],
          ])
        ).status,
        200,
      );
      assert.equal(await balance(url), 99);
    }));

  test('on alone with the option, for a service without CORS: no origin is trusted but the service’s own', () =>
    withServer({ service: 'todo', crossOriginProtection: true }, async (url) => {
      const put = (headers: Headers): Promise<RawResponse> =>
        send(url, {
          method: 'PUT',
          path: '/todos/1',
          headers: [['Content-Type', 'application/json'], ...headers],
          body: '{"title":"forged"}',
        });
      assert.equal(
        (
          await put([
            ['Sec-Fetch-Site', 'cross-site'],
            ['Origin', LISTED],
          ])
        ).status,
        403,
      );
      assert.equal((await put([['Origin', LISTED]])).status, 403);
      assert.equal(
        (JSON.parse((await get(url, '/todos/1')).text) as { title: string }).title,
        'Buy milk',
      );
      assert.equal((await put([['Origin', `http://${new URL(url).host}`]])).status, 200);
      const res = await put([]);
      assert.equal(res.status, 200);
      assert.equal(res.headers.vary, undefined, 'no CORS header without CORS');
    }));

  test('the documents list the 403 on every unsafe operation, and on no read, when the protection is on', async () => {
    for (const on of [false, true]) {
      await withServer(
        { service: 'todo', errors: 'unified', crossOriginProtection: on },
        async (url) => {
          const document = JSON.parse((await get(url, '/openapi.json')).text) as {
            paths: Record<string, Record<string, unknown>>;
          };
          for (const [path, operations] of Object.entries(document.paths)) {
            for (const [method, operation] of Object.entries(operations)) {
              const listed = JSON.stringify(operation).includes('CROSS_ORIGIN_REFUSED');
              assert.equal(listed, on && method !== 'get', `${method} ${path}`);
            }
          }
        },
      );
    }
  });
});
