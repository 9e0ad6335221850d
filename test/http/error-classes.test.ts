// The errors of the HTTP layer (src/http/errors.ts) as the renderer draws them and as a log
// shows them. The answers of real servers are in the contract and format tests; these pin what only
// some paths reach (the store away, a client leaving mid-body, a member name that needs escaping).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  ApiError,
  ClientAbortError,
  InvalidRequest,
  invalidRequest,
  serviceUnavailable,
} from '../../src/http/errors.js';
import { ERROR_FORMAT_NAMES, renderError } from '../../src/http/render.js';

describe('the HTTP error classes', () => {
  test('the store away is 503 with Retry-After: 1 in every format, and not an unexpected failure', () => {
    for (const name of ERROR_FORMAT_NAMES) {
      const rendered = renderError(serviceUnavailable(), { name, catchAll: true });
      assert.deepEqual(
        [rendered.status, rendered.headers, rendered.unexpected],
        [503, { 'Retry-After': '1' }, false],
        name,
      );
    }
  });

  test('an error we meant to raise is not unexpected in any format; anything else is, and is logged in full', () => {
    const meant = [
      new ApiError('HTTP_404'),
      new ApiError('IDEMPOTENCY_KEY_REUSED'),
      invalidRequest([]),
    ];
    for (const name of ERROR_FORMAT_NAMES) {
      for (const error of meant)
        assert.equal(
          renderError(error, { name, catchAll: true }).unexpected,
          false,
          `${name}: ${error.name}`,
        );
      assert.equal(renderError(new Error('boom'), { name, catchAll: true }).unexpected, true, name);
    }
  });

  test('a validation failure handed back as a value renders byte for byte as the thrown one, in every format', () => {
    const items = [
      { type: 'missing', loc: ['body', 'title'], msg: 'Field required', input: { done: true } },
      {
        type: 'int_parsing',
        loc: ['path', 'todo_id'],
        msg: 'Input should be a valid integer, unable to parse string as an integer',
        input: 'x',
      },
    ];
    for (const name of ERROR_FORMAT_NAMES) {
      for (const catchAll of [false, true]) {
        const thrown = renderError(invalidRequest(items), { name, catchAll });
        assert.equal(thrown.status, 422);
        assert.deepEqual(renderError(new InvalidRequest(items), { name, catchAll }), thrown, name);
      }
    }
  });

  test("a problem's pointer escapes ~ and / as RFC 6901 says, then percent-encodes for the URI fragment", () => {
    const error = invalidRequest([
      { type: 'missing', loc: ['body', 'a/b~c', 0, 'x y'], msg: 'Field required', input: null },
    ]);
    const body = JSON.parse(renderError(error, { name: 'problem', catchAll: true }).body) as {
      errors: { pointer: string }[];
    };
    assert.equal(body.errors[0]?.pointer, '#/a~1b~0c/0/x%20y');
  });

  test("a problem's pointer is the same whether its members are written as they are or escaped and encoded", () => {
    const cases: [readonly (string | number)[], string][] = [
      [['body'], '#'],
      [['body', 'items', 3, 'name'], '#/items/3/name'],
      [['body', 'a-b.c_D9'], '#/a-b.c_D9'],
      [['body', ''], '#/'],
      [['body', 'x', 'é'], '#/x/%C3%A9'],
      [['body', '"q"\\'], '#/%22q%22%5C'],
      [['body', 'a!b'], '#/a!b'],
      [['body', 1.5], '#/1.5'],
      [['body', 1e21], '#/1e%2B21'],
      [['body', -1], '#/-1'],
    ];
    for (const [loc, pointer] of cases) {
      const error = invalidRequest([{ type: 'missing', loc, msg: 'Field required', input: null }]);
      const body = JSON.parse(renderError(error, { name: 'problem', catchAll: true }).body) as {
        errors: { pointer: string }[];
      };
      assert.equal(body.errors[0]?.pointer, pointer, JSON.stringify(loc));
    }
  });

  test('each error names itself in a log, with a message that says what happened; building one leaves the stack trace limit as it was', () => {
    const limit = Error.stackTraceLimit;
    const items = [{ type: 'missing', loc: ['body'], msg: '', input: null }];
    const errors = [
      new ApiError('HTTP_404', { message: 'Todo not found' }),
      new ApiError('IDEMPOTENCY_KEY_REUSED'),
      invalidRequest(items),
      serviceUnavailable(),
      new ClientAbortError(),
    ];
    assert.deepEqual(
      errors.map((error) => `${error.name}: ${error.message}`),
      [
        'ApiError: Todo not found',
        'ApiError: This Idempotency-Key was used for another request (another method, path or body)',
        'ApiError: Some fields are wrong',
        'ApiError: Service Unavailable',
        'ClientAbortError: the client closed the connection before the request was complete',
      ],
    );
    assert.equal(new ClientAbortError().code, 'CLIENT_ABORTED');
    assert.equal(Error.stackTraceLimit, limit, 'the stack trace limit is restored');
  });

  test('an answer carries no stack; a business rule the default format does not recognise does, as the unhandled failure it is there', () => {
    assert.doesNotMatch(new ApiError('HTTP_404').stack ?? '', /\n\s+at /);
    assert.doesNotMatch(invalidRequest([]).stack ?? '', /\n\s+at /);
    assert.match(new ApiError('NOT_ENOUGH_MONEY').stack ?? '', /\n\s+at /);
  });
});
