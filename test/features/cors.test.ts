// Cross-origin requests (src/features/cors/cors.ts), on real servers: off by default; when on, every
// answer to an allowed origin carries the CORS headers — successes, every error the services give,
// the 500 of a failure, a 503, a redirect — and a preflight from it is answered 204.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseCorsOrigins, type CorsPolicy } from '../../src/features/cors/cors.js';
import { corsStage } from '../../src/features/cors/stage.js';
import { serviceUnavailable } from '../../src/http/errors.js';
import { defineRoute, type Route } from '../../src/http/route.js';
import { createLogger } from '../../src/observe/log.js';
import { startServer } from '../../src/server.js';
import { send, type RawRequest, type RawResponse } from '../support/http.js';
import { withServer } from '../support/server.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

const PAGE = 'http://127.0.0.1:5173';
const OTHER = 'http://127.0.0.1:9999';
const POLICY = parseCorsOrigins(`${PAGE}, https://app.example`) as CorsPolicy;
/** Every header: the services never allow credentials, so `*` means all (cors.ts). */
const EXPOSED = '*';

const from = (origin: string, req: RawRequest): RawRequest => ({
  ...req,
  headers: [...(req.headers ?? []), ['Origin', origin]],
});

/** One route served with the CORS stage alone, asked once from the listed page: its answer. */
async function answerFromPage(route: Route): Promise<RawResponse> {
  const server = await startServer(
    {
      title: 'One route',
      version: '0',
      routes: [route],
      components: {},
      ready: () => Promise.resolve(true),
      close: () => Promise.resolve(),
    },
    {
      host: '127.0.0.1',
      port: 0,
      errorFormat: { name: 'default', catchAll: false },
      service: 'one-route',
      log: createLogger('silent'),
      features: [{ stages: () => [corsStage(POLICY)] }],
    },
  );
  try {
    return await send(server.url, from(PAGE, { method: route.method, path: route.path }));
  } finally {
    await server.close();
  }
}

function assertAllowed(res: RawResponse, what: string): void {
  assert.equal(res.headers['access-control-allow-origin'], PAGE, what);
  assert.equal(res.headers['access-control-expose-headers'], EXPOSED, what);
  assert.equal(res.headers.vary, 'Origin', what);
  assert.ok(typeof res.headers['x-request-id'] === 'string', what);
}

describe('CORS', { timeout: SUITE_TIMEOUT_MS }, () => {
  test('off by default: no CORS header on any answer, and a preflight is the 405 the path gives OPTIONS', () =>
    withServer({ service: 'todo' }, async (url) => {
      const res = await send(url, from(PAGE, { method: 'GET', path: '/todos/1' }));
      assert.equal(res.status, 200);
      assert.deepEqual(
        Object.keys(res.headers).filter(
          (name) => name.startsWith('access-control-') || name === 'vary',
        ),
        [],
      );
      const preflight = await send(
        url,
        from(PAGE, {
          method: 'OPTIONS',
          path: '/todos/1',
          headers: [['Access-Control-Request-Method', 'PUT']],
        }),
      );
      assert.equal(preflight.status, 405);
    }));

  test('every answer to an allowed origin carries Access-Control-Allow-Origin and the exposed headers: 200, 201, 204, 307, 404, 405, 409, 413, 422', () =>
    withServer({ service: 'todo', cors: POLICY }, async (url) => {
      const json = [['Content-Type', 'application/json']] as const;
      const cases: [RawRequest, number][] = [
        [{ method: 'GET', path: '/todos/1' }, 200],
        [{ method: 'POST', path: '/todos', headers: json, body: '{"title":"t"}' }, 201],
        [{ method: 'DELETE', path: '/todos/2' }, 204],
        [{ method: 'GET', path: '/todos/1/' }, 307],
        [{ method: 'GET', path: '/todos/99' }, 404],
        [{ method: 'GET', path: '/nowhere' }, 404],
        [{ method: 'PATCH', path: '/todos/1' }, 405],
        [{ method: 'POST', path: '/todos/1/done' }, 200],
        [{ method: 'POST', path: '/todos/1/done' }, 409],
        [
          {
            method: 'POST',
            path: '/todos',
            headers: json,
            body: `{"title":"${'x'.repeat(1024 * 1024)}"}`,
          },
          413,
        ],
        [{ method: 'POST', path: '/todos', headers: json, body: '{}' }, 422],
      ];
      for (const [req, status] of cases) {
        const res = await send(url, from(PAGE, req));
        assert.equal(res.status, status, `${req.method} ${req.path}`);
        assertAllowed(res, `${req.method} ${req.path} ${status}`);
      }
    }));

  test("the bank's deliberate failures carry them too: the 401, the 403, the unhandled 500 and insufficient funds' 500", () =>
    withServer({ service: 'bank', cors: POLICY }, async (url) => {
      for (const [path, method, status] of [
        ['/secret', 'GET', 401],
        ['/accounts/alice/limits', 'GET', 403],
        ['/crash', 'GET', 500],
        ['/withdraw/bob/6', 'POST', 500],
      ] as const) {
        const res = await send(url, from(PAGE, { method, path }));
        assert.equal(res.status, status, path);
        assertAllowed(res, path);
      }
    }));

  test('a 503 carries them, with its Retry-After exposed', async () => {
    const res = await answerFromPage(
      defineRoute({
        method: 'GET',
        path: '/away',
        status: 200,
        params: {},
        docs: { name: 'away', succeeds: false },
        handle: () => {
          throw serviceUnavailable();
        },
      }),
    );
    assert.equal(res.status, 503);
    assert.equal(res.headers['retry-after'], '1');
    assertAllowed(res, '503');
  });

  test('the plain 500 that replaces an answer node:http refuses to write carries them too', async () => {
    const res = await answerFromPage(
      defineRoute({
        method: 'GET',
        path: '/unsendable',
        status: 200,
        params: {},
        docs: { name: 'unsendable', example: '{}' },
        // A line break in a header's value: writeHead refuses the answer.
        handle: () => ({ status: 200, body: '{}', headers: { 'X-Note': 'line\r\nbreak' } }),
      }),
    );
    assert.equal(res.status, 500);
    assert.equal(res.text, 'Internal Server Error');
    assertAllowed(res, 'the plain 500');
  });

  test('another origin gets no CORS header, only Vary: Origin; a request without Origin the same', () =>
    withServer({ service: 'todo', cors: POLICY }, async (url) => {
      for (const res of [
        await send(url, from(OTHER, { method: 'GET', path: '/todos/1' })),
        await send(url, { method: 'GET', path: '/todos/1' }),
      ]) {
        assert.equal(res.status, 200);
        assert.equal(res.headers['access-control-allow-origin'], undefined);
        assert.equal(res.headers.vary, 'Origin');
      }
    }));

  test('a preflight from an allowed origin is 204 with the methods and headers a page may use; from another origin it is routed as usual', () =>
    withServer({ service: 'todo', cors: POLICY }, async (url) => {
      const ask: RawRequest = {
        method: 'OPTIONS',
        path: '/todos/1',
        headers: [
          ['Access-Control-Request-Method', 'PUT'],
          ['Access-Control-Request-Headers', 'content-type, idempotency-key'],
        ],
      };
      const res = await send(url, from(PAGE, ask));
      assert.equal(res.status, 204);
      assert.equal(res.body.length, 0);
      assert.equal(res.headers['access-control-allow-origin'], PAGE);
      assert.equal(res.headers['access-control-allow-methods'], 'GET, HEAD, POST, PUT, DELETE');
      assert.equal(
        res.headers['access-control-allow-headers'],
        'Content-Type, Idempotency-Key, X-Request-Id, If-Match, If-None-Match, traceparent, tracestate, baggage',
      );
      assert.equal(res.headers['access-control-max-age'], '600');
      assert.equal((await send(url, from(OTHER, ask))).status, 405);
      assert.equal(
        (await send(url, from(PAGE, { method: 'OPTIONS', path: '/todos/1' }))).status,
        405,
        'an OPTIONS that is no preflight is routed',
      );
    }));

  test('--cors-origin takes exact origins only: no path, no trailing slash, http or https', () => {
    assert.deepEqual(
      [...(parseCorsOrigins('https://a.example, http://127.0.0.1:8080') as CorsPolicy).origins],
      ['https://a.example', 'http://127.0.0.1:8080'],
    );
    for (const bad of [
      'a.example',
      'https://a.example/',
      'https://a.example/app',
      'ftp://a.example',
      '*',
      '',
    ]) {
      assert.equal(typeof parseCorsOrigins(bad), 'string', bad);
    }
  });
});
