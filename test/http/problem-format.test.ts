// `--errors problem`: every error of both services is an RFC 9457 problem
// (application/problem+json) with type, title, status, detail and our wire code as `code`; one test
// per promise of the format.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CRASH_SECRET } from '../../src/bank/model.js';
import { json, postJson, send, type RawResponse } from '../support/http.js';
import { withServer } from '../support/server.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

const bank = (body: (url: string) => Promise<void>): Promise<void> =>
  withServer({ service: 'bank', errors: 'problem' }, body);
const todo = (body: (url: string) => Promise<void>): Promise<void> =>
  withServer({ service: 'todo', errors: 'problem' }, body);
const call = (url: string, method: string, path: string): Promise<RawResponse> =>
  send(url, { method, path });

function assertProblem(res: RawResponse, status: number, body: unknown): void {
  assert.equal(res.status, status);
  assert.equal(res.headers['content-type'], 'application/problem+json');
  assert.deepEqual(json(res), body);
}

const INT_PARSING = 'Input should be a valid integer, unable to parse string as an integer';

describe('problem details (--errors problem)', { timeout: SUITE_TIMEOUT_MS }, () => {
  test('an error that says no more than its status is about:blank, titled with the reason phrase', () =>
    bank(async (url) => {
      assertProblem(await call(url, 'GET', '/accounts/zed'), 404, {
        type: 'about:blank',
        title: 'Not Found',
        status: 404,
        detail: 'Account zed not found',
        code: 'HTTP_404',
      });
      assertProblem(await call(url, 'GET', '/nowhere'), 404, {
        type: 'about:blank',
        title: 'Not Found',
        status: 404,
        detail: 'Not Found',
        code: 'HTTP_404',
      });
    }));

  test("the error's headers are kept: WWW-Authenticate on the 401, Allow on the 405", () =>
    bank(async (url) => {
      const secret = await call(url, 'GET', '/secret');
      assertProblem(secret, 401, {
        type: 'about:blank',
        title: 'Unauthorized',
        status: 401,
        detail: 'Login needed',
        code: 'HTTP_401',
      });
      assert.equal(secret.headers['www-authenticate'], 'Bearer');
      const wrongMethod = await call(url, 'DELETE', '/secret');
      assertProblem(wrongMethod, 405, {
        type: 'about:blank',
        title: 'Method Not Allowed',
        status: 405,
        detail: 'Method Not Allowed',
        code: 'HTTP_405',
      });
      assert.equal(wrongMethod.headers.allow, 'GET, HEAD');
    }));

  test('limits hidden is a problem of its own, with a stable type URI', () =>
    bank(async (url) => {
      assertProblem(await call(url, 'GET', '/accounts/alice/limits'), 403, {
        type: '/docs/problems#limits-hidden',
        title: 'Limits hidden',
        status: 403,
        detail: 'Only managers can see limits',
        code: 'LIMITS_HIDDEN',
      });
    }));

  test('insufficient funds is 400 not-enough-money, and the balance is unchanged', () =>
    bank(async (url) => {
      assertProblem(await call(url, 'POST', '/withdraw/bob/6'), 400, {
        type: '/docs/problems#not-enough-money',
        title: 'Not enough money',
        status: 400,
        detail: 'Balance is 5, you asked for 6',
        code: 'NOT_ENOUGH_MONEY',
      });
      assert.deepEqual(json(await call(url, 'GET', '/accounts/bob')), {
        account: 'bob',
        balance: 5,
      });
    }));

  test('a bad path parameter is a 422 whose errors item names the parameter and the pydantic type', () =>
    bank(async (url) => {
      assertProblem(await call(url, 'POST', '/withdraw/alice/abc'), 422, {
        type: '/docs/problems#validation-failed',
        title: 'Validation failed',
        status: 422,
        detail: 'Some fields are wrong',
        code: 'VALIDATION_FAILED',
        errors: [{ detail: INT_PARSING, parameter: 'amount', type: 'int_parsing' }],
      });
    }));

  test('a bad body is a 422 whose errors items point into the body; a syntax error points at all of it', () =>
    todo(async (url) => {
      const validation = {
        type: '/docs/problems#validation-failed',
        title: 'Validation failed',
        status: 422,
        detail: 'Some fields are wrong',
        code: 'VALIDATION_FAILED',
      };
      assertProblem(await postJson(url, '/todos', '{"done": "maybe"}'), 422, {
        ...validation,
        errors: [
          { detail: 'Field required', pointer: '#/title', type: 'missing' },
          {
            detail: 'Input should be a valid boolean, unable to interpret input',
            pointer: '#/done',
            type: 'bool_parsing',
          },
        ],
      });
      assertProblem(await postJson(url, '/todos', '{"title": '), 422, {
        ...validation,
        errors: [{ detail: 'JSON decode error', pointer: '#', type: 'json_invalid' }],
      });
    }));

  test('the to-do errors are problems too: 404 and 409', () =>
    todo(async (url) => {
      assertProblem(await call(url, 'GET', '/todos/2'), 404, {
        type: 'about:blank',
        title: 'Not Found',
        status: 404,
        detail: 'Todo not found',
        code: 'HTTP_404',
      });
      assert.equal((await call(url, 'POST', '/todos/1/done')).status, 200);
      assertProblem(await call(url, 'POST', '/todos/1/done'), 409, {
        type: 'about:blank',
        title: 'Conflict',
        status: 409,
        detail: 'Todo is already done',
        code: 'HTTP_409',
      });
    }));

  test('an unhandled failure is always a JSON problem 500 with a fixed detail, never its text', () =>
    bank(async (url) => {
      const res = await call(url, 'GET', '/crash');
      assertProblem(res, 500, {
        type: 'about:blank',
        title: 'Internal Server Error',
        status: 500,
        detail: 'Something went wrong on our side',
        code: 'INTERNAL',
      });
      assert.ok(!res.text.includes(CRASH_SECRET));
    }));
});
