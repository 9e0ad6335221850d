// The API lifecycle (src/features/lifecycle/): --deprecate marks an operation; every answer of it
// carries Deprecation (RFC 9745), Sunset (RFC 8594) and a Link to its documentation; from its
// sunset on it answers 410 OPERATION_SUNSET in the active format and does nothing else; the
// operations not named are untouched; a value that is not an operation and its interval is
// refused at start.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, readConfig } from '../../src/config.js';
import { settingsOf } from '../../src/features/feature.js';
import type { Deprecation } from '../../src/features/lifecycle/deprecations.js';
import { lifecycle } from '../../src/features/lifecycle/feature.js';
import { get, send, type RawResponse } from '../support/http.js';
import { withServer } from '../support/server.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

const DEPRECATED_AT = Date.UTC(2026, 0, 1);
const FAR_SUNSET = Date.UTC(2099, 0, 1);

const readV2 = (sunsetAtMs: number): Deprecation => ({
  method: 'GET',
  path: '/v2/todos/{todo_id}',
  deprecatedAtMs: DEPRECATED_AT,
  sunsetAtMs,
});

function assertMarked(res: RawResponse, sunsetAtMs: number, what: string): void {
  assert.equal(res.headers.deprecation, `@${DEPRECATED_AT / 1000}`, what);
  assert.equal(res.headers.sunset, new Date(sunsetAtMs).toUTCString(), what);
  assert.equal(
    res.headers.link,
    '</docs#/default/readTodoV2>; rel="deprecation"; type="text/html"',
    what,
  );
}

describe('the API lifecycle', { timeout: SUITE_TIMEOUT_MS }, () => {
  test('every answer of a deprecated operation says so, its errors too; an operation not named is untouched', () =>
    withServer({ service: 'todo', deprecations: [readV2(FAR_SUNSET)] }, async (url) => {
      const found = await get(url, '/v2/todos/1');
      assert.equal(found.status, 200);
      assertMarked(found, FAR_SUNSET, '200');
      assertMarked(await get(url, '/v2/todos/99'), FAR_SUNSET, '404');
      assertMarked(await get(url, '/v2/todos/abc'), FAR_SUNSET, '422');
      const other = await get(url, '/todos/1');
      assert.equal(other.status, 200);
      for (const name of ['deprecation', 'sunset', 'link'])
        assert.equal(other.headers[name], undefined, name);
    }));

  for (const [format, body] of [
    [
      'default',
      '{"detail":{"code":"OPERATION_SUNSET","message":"This operation reached its sunset and is no longer served: the Link header names its documentation"}}',
    ],
    [
      'unified',
      '{"error":{"code":"OPERATION_SUNSET","message":"This operation reached its sunset and is no longer served: the Link header names its documentation"}}',
    ],
    [
      'problem',
      '{"type":"/docs/problems#operation-sunset","title":"Operation withdrawn","status":410,"detail":"This operation reached its sunset and is no longer served: the Link header names its documentation","code":"OPERATION_SUNSET"}',
    ],
  ] as const) {
    test(`${format}: from its sunset on, the operation answers 410 OPERATION_SUNSET with its headers, and does nothing else`, () => {
      const past = Date.now() - 1_000;
      const removal: Deprecation = { ...readV2(past), method: 'DELETE', path: '/todos/{todo_id}' };
      return withServer(
        { service: 'todo', errors: format, deprecations: [readV2(past), removal] },
        async (url) => {
          const gone = await get(url, '/v2/todos/1');
          assert.equal(gone.status, 410);
          assert.equal(gone.text, body);
          assertMarked(gone, past, 'the 410');
          // Nothing else runs: not the input's validation, not the write.
          assert.equal((await get(url, '/v2/todos/abc')).status, 410);
          assert.equal((await send(url, { method: 'DELETE', path: '/todos/1' })).status, 410);
          assert.equal((await get(url, '/todos/1')).status, 200);
        },
      );
    });
  }

  test('--deprecate and SVC_DEPRECATE name operations with the two instants of an ISO 8601 interval; repeatable', () => {
    const read = (argv: readonly string[], env: NodeJS.ProcessEnv = {}) =>
      settingsOf(readConfig(argv, env).features, lifecycle);
    assert.equal(read([]), undefined);
    assert.deepEqual(
      read(['--deprecate', 'GET:/v2/todos/{todo_id}@2026-01-01T00:00:00Z/2027-01-01T00:00:00Z']),
      [
        {
          method: 'GET',
          path: '/v2/todos/{todo_id}',
          deprecatedAtMs: DEPRECATED_AT,
          sunsetAtMs: Date.UTC(2027, 0, 1),
        },
      ],
    );
    assert.deepEqual(
      read([
        '--deprecate=delete:/todos/{todo_id}@2026-01-01T01:00:00+01:00/2026-06-01T00:00:00.5Z',
        '--deprecate',
        'GET:/todos/{todo_id}@2026-01-01T00:00Z/2026-01-01T00:00Z',
      ])?.map((entry) => [entry.method, entry.deprecatedAtMs, entry.sunsetAtMs]),
      [
        ['DELETE', DEPRECATED_AT, Date.UTC(2026, 5, 1, 0, 0, 0, 500)],
        ['GET', DEPRECATED_AT, DEPRECATED_AT],
      ],
    );
    assert.equal(
      read([], {
        SVC_DEPRECATE:
          'GET:/todos/{todo_id}@2026-01-01T00:00:00Z/2027-01-01T00:00:00Z POST:/todos@2026-01-01T00:00:00Z/2027-01-01T00:00:00Z',
      })?.length,
      2,
    );
  });

  test('a value that is not METHOD:PATH@DEPRECATED/SUNSET, or names one operation twice, is refused at start, saying why', () => {
    for (const [value, why] of [
      [
        '/v2/todos/{todo_id}@2026-01-01T00:00:00Z/2027-01-01T00:00:00Z',
        /write METHOD:PATH@DEPRECATED\/SUNSET/,
      ],
      ['PATCH:/todos/{todo_id}@2026-01-01T00:00:00Z/2027-01-01T00:00:00Z', /write METHOD:PATH/],
      ['GET:/todos/{todo_id}', /write METHOD:PATH/],
      ['GET:/todos/{todo_id}@2026-01-01T00:00:00Z', /an ISO 8601 interval of two instants/],
      [
        'GET:/todos/{todo_id}@2026-02-30T00:00:00Z/2027-01-01T00:00:00Z',
        /"2026-02-30T00:00:00Z" is not an instant/,
      ],
      ['GET:/todos/{todo_id}@2026-01-01T00:00:00/2027-01-01T00:00:00Z', /is not an instant/],
      ['GET:/todos/{todo_id}@2026-01-01/2027-01-01', /is not an instant/],
      [
        'GET:/todos/{todo_id}@2027-01-01T00:00:00Z/2026-01-01T00:00:00Z',
        /the sunset comes before the deprecation/,
      ],
    ] as const)
      assert.throws(
        () => readConfig(['--deprecate', value], {}),
        (error: unknown) => error instanceof ConfigError && why.test(error.message),
        value,
      );
    const twice = 'GET:/todos/{todo_id}@2026-01-01T00:00:00Z/2027-01-01T00:00:00Z';
    assert.throws(() => readConfig(['--deprecate', twice, '--deprecate', twice], {}), {
      message: '--deprecate names GET /todos/{todo_id} twice',
    });
  });

  test('an operation no service of the process has is refused once the services are known', () => {
    const settings = settingsOf(
      readConfig(
        ['--deprecate', 'GET:/v3/todos/{todo_id}@2026-01-01T00:00:00Z/2027-01-01T00:00:00Z'],
        {},
      ).features,
      lifecycle,
    );
    assert.ok(settings !== undefined);
    assert.throws(() => lifecycle.verify?.(settings, []), {
      message: '--deprecate names GET /v3/todos/{todo_id}, which no service started here has',
    });
  });
});
