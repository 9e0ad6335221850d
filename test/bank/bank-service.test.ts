// The banking service, one test per promise of the contract, in each error format.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CRASH_SECRET } from '../../src/bank/model.js';
import { get, json, send, type RawResponse } from '../support/http.js';
import { withServer, type TestServerOptions } from '../support/server.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

const DEFAULT: TestServerOptions = { service: 'bank', errors: 'default' };
const UNIFIED: TestServerOptions = { service: 'bank', errors: 'unified' };
const CATCH_ALL: TestServerOptions = { service: 'bank', errors: 'unified', catchAll: true };

const onBank = (
  name: string,
  options: TestServerOptions,
  body: (url: string) => Promise<void>,
): void => {
  test(name, () => withServer(options, body));
};
const withdraw = (url: string, account: string, amount: string | number): Promise<RawResponse> =>
  send(url, { method: 'POST', path: `/withdraw/${account}/${amount}` });
const balanceOf = async (url: string, account: string): Promise<number> =>
  (json(await get(url, `/accounts/${account}`)) as { balance: number }).balance;

describe('accounts (every format)', { timeout: SUITE_TIMEOUT_MS }, () => {
  for (const options of [DEFAULT, UNIFIED, CATCH_ALL]) {
    const mode = `${options.errors}${options.catchAll === true ? ' + catch-all' : ''}`;
    onBank(`[${mode}] the bank starts with alice 100 and bob 5`, options, async (url) => {
      assert.deepEqual(json(await get(url, '/accounts/alice')), { account: 'alice', balance: 100 });
      assert.deepEqual(json(await get(url, '/accounts/bob')), { account: 'bob', balance: 5 });
    });
    onBank(
      `[${mode}] a withdrawal answers 200 with the reduced balance, and the balance stays reduced`,
      options,
      async (url) => {
        const res = await withdraw(url, 'alice', 30);
        assert.equal(res.status, 200);
        assert.deepEqual(json(res), { account: 'alice', balance: 70 });
        assert.equal(await balanceOf(url, 'alice'), 70);
      },
    );
    onBank(`[${mode}] withdrawing exactly the balance is allowed`, options, async (url) => {
      assert.deepEqual(json(await withdraw(url, 'bob', 5)), { account: 'bob', balance: 0 });
    });
    onBank(`[${mode}] a refused withdrawal leaves the balance as it was`, options, async (url) => {
      await withdraw(url, 'bob', 6);
      await withdraw(url, 'bob', 0);
      await withdraw(url, 'bob', 'abc');
      assert.equal(await balanceOf(url, 'bob'), 5);
    });
  }
});

describe('default format', { timeout: SUITE_TIMEOUT_MS }, () => {
  onBank(
    'an unknown account is 404 "Account <name> not found", for reads and withdrawals alike',
    DEFAULT,
    async (url) => {
      for (const res of [await get(url, '/accounts/zed'), await withdraw(url, 'zed', 1)]) {
        assert.equal(res.status, 404);
        assert.deepEqual(json(res), { detail: 'Account zed not found' });
      }
    },
  );
  onBank('the account is looked up before the amount is checked', DEFAULT, async (url) => {
    assert.equal((await withdraw(url, 'zed', 999)).status, 404);
  });
  onBank(
    'validation comes before the account lookup: a bad amount is 422 even for an unknown account',
    DEFAULT,
    async (url) => {
      const res = await withdraw(url, 'zed', 'abc');
      assert.equal(res.status, 422);
      assert.deepEqual(json(res), {
        detail: [
          {
            type: 'int_parsing',
            loc: ['path', 'amount'],
            msg: 'Input should be a valid integer, unable to parse string as an integer',
            input: 'abc',
          },
        ],
      });
    },
  );
  onBank('an amount of 0 or less is 422 greater_than (D1)', DEFAULT, async (url) => {
    for (const amount of ['0', '-10']) {
      assert.deepEqual(json(await withdraw(url, 'alice', amount)), {
        detail: [
          {
            type: 'greater_than',
            loc: ['path', 'amount'],
            msg: 'Input should be greater than 0',
            input: amount,
            ctx: { gt: 0 },
          },
        ],
      });
    }
  });
  onBank('an amount past 2^53-1 is 422 less_than_equal (D2)', DEFAULT, async (url) => {
    assert.equal(
      (json(await withdraw(url, 'alice', '9007199254740992')) as { detail: { type: string }[] })
        .detail[0]?.type,
      'less_than_equal',
    );
  });
  onBank(
    'insufficient funds is not recognised: the plain 500 "Internal Server Error"',
    DEFAULT,
    async (url) => {
      const res = await withdraw(url, 'bob', 6);
      assert.equal(res.status, 500);
      assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
      assert.equal(res.text, 'Internal Server Error');
    },
  );
  onBank('/secret is 401 "Login needed" with WWW-Authenticate: Bearer', DEFAULT, async (url) => {
    const res = await get(url, '/secret');
    assert.equal(res.status, 401);
    assert.equal(res.headers['www-authenticate'], 'Bearer');
    assert.deepEqual(json(res), { detail: 'Login needed' });
  });
  onBank('the limits endpoint is 403 with an object detail', DEFAULT, async (url) => {
    const res = await get(url, '/accounts/alice/limits');
    assert.equal(res.status, 403);
    assert.deepEqual(json(res), {
      detail: { code: 'LIMITS_HIDDEN', message: 'Only managers can see limits' },
    });
  });
  onBank(
    '/crash is a plain-text 500 that shows nothing of the failure, and the service lives on',
    DEFAULT,
    async (url) => {
      const res = await get(url, '/crash');
      assert.equal(res.status, 500);
      assert.equal(res.text, 'Internal Server Error');
      assert.doesNotMatch(
        res.text + JSON.stringify(res.headers),
        new RegExp(`${CRASH_SECRET}|deliberate|\\.js|\\n\\s+at `),
      );
      assert.equal((await get(url, '/accounts/alice')).status, 200);
    },
  );
});

describe('unified format', { timeout: SUITE_TIMEOUT_MS }, () => {
  onBank(
    'a string detail becomes {error:{code:"HTTP_<status>", message}}',
    UNIFIED,
    async (url) => {
      const res = await get(url, '/accounts/zed');
      assert.equal(res.status, 404);
      assert.deepEqual(json(res), {
        error: { code: 'HTTP_404', message: 'Account zed not found' },
      });
    },
  );
  onBank(
    'unknown paths and wrong methods are converted too, with their headers kept',
    UNIFIED,
    async (url) => {
      assert.deepEqual(json(await get(url, '/nope')), {
        error: { code: 'HTTP_404', message: 'Not Found' },
      });
      const res = await send(url, { method: 'DELETE', path: '/secret' });
      assert.equal(res.status, 405);
      assert.equal(res.headers.allow, 'GET, HEAD');
      assert.deepEqual(json(res), { error: { code: 'HTTP_405', message: 'Method Not Allowed' } });
    },
  );
  onBank(
    'the 401 becomes HTTP_401 "Login needed" and keeps WWW-Authenticate',
    UNIFIED,
    async (url) => {
      const res = await get(url, '/secret');
      assert.equal(res.status, 401);
      assert.equal(res.headers['www-authenticate'], 'Bearer');
      assert.deepEqual(json(res), { error: { code: 'HTTP_401', message: 'Login needed' } });
    },
  );
  onBank('an object detail is the error as it is', UNIFIED, async (url) => {
    assert.deepEqual(json(await get(url, '/accounts/alice/limits')), {
      error: { code: 'LIMITS_HIDDEN', message: 'Only managers can see limits' },
    });
  });
  onBank(
    'insufficient funds is 400 NOT_ENOUGH_MONEY "Balance is <balance>, you asked for <wanted>"',
    UNIFIED,
    async (url) => {
      const res = await withdraw(url, 'bob', 6);
      assert.equal(res.status, 400);
      assert.deepEqual(json(res), {
        error: { code: 'NOT_ENOUGH_MONEY', message: 'Balance is 5, you asked for 6' },
      });
    },
  );
  onBank(
    'a validation failure is VALIDATION_FAILED with field path.amount',
    UNIFIED,
    async (url) => {
      const res = await withdraw(url, 'alice', 'abc');
      assert.equal(res.status, 422);
      assert.deepEqual(json(res), {
        error: {
          code: 'VALIDATION_FAILED',
          message: 'Some fields are wrong',
          fields: [
            {
              field: 'path.amount',
              message: 'Input should be a valid integer, unable to parse string as an integer',
            },
          ],
        },
      });
    },
  );
  onBank(
    'without the catch-all, an unhandled failure stays the plain-text 500',
    UNIFIED,
    async (url) => {
      const res = await get(url, '/crash');
      assert.equal(res.status, 500);
      assert.equal(res.text, 'Internal Server Error');
    },
  );
  onBank(
    'with the catch-all, an unhandled failure is 500 INTERNAL with a fixed message',
    CATCH_ALL,
    async (url) => {
      const res = await get(url, '/crash');
      assert.equal(res.status, 500);
      assert.deepEqual(json(res), {
        error: { code: 'INTERNAL', message: 'Something went wrong on our side' },
      });
      assert.doesNotMatch(res.text, new RegExp(CRASH_SECRET));
    },
  );
  onBank(
    'the documented 422 body is the unified envelope (or, for a reused Idempotency-Key, the unified error)',
    UNIFIED,
    async (url) => {
      const doc = json(await get(url, '/openapi.json')) as {
        paths: Record<
          string,
          Record<
            string,
            {
              responses: Record<
                string,
                { content: Record<string, { schema: { anyOf: { $ref: string }[] } }> }
              >;
            }
          >
        >;
        components: { schemas: Record<string, { properties: Record<string, unknown> }> };
      };
      const refs = doc.paths['/withdraw/{account}/{amount}']?.post?.responses['422']?.content[
        'application/json'
      ]?.schema.anyOf.map((s) => s.$ref);
      assert.deepEqual(refs, [
        '#/components/schemas/UnifiedValidationError',
        '#/components/schemas/UnifiedError',
      ]);
      assert.ok(doc.components.schemas.UnifiedValidationError?.properties.error);
      assert.equal(doc.components.schemas.HTTPValidationError, undefined);
    },
  );
});

describe('documentation', { timeout: SUITE_TIMEOUT_MS }, () => {
  type Doc = {
    paths: Record<
      string,
      Record<
        string,
        {
          responses: Record<
            string,
            { headers?: object; content?: Record<string, { schema: unknown }> }
          >;
        }
      >
    >;
  };
  /** The three-digit codes, as the contract counts them; `default` describes every other error. */
  const codesOf = (doc: Doc, method: string, path: string): string[] =>
    Object.keys(doc.paths[path]?.[method]?.responses ?? {})
      .filter((code) => /^\d{3}$/.test(code))
      .sort();

  onBank(
    "each operation lists exactly the codes it answers, insufficient funds as the default format's 500 (D10)",
    DEFAULT,
    async (url) => {
      const doc = json(await get(url, '/openapi.json')) as Doc;
      assert.deepEqual(codesOf(doc, 'get', '/accounts/{account}'), ['200', '404', '422']);
      assert.deepEqual(codesOf(doc, 'get', '/secret'), ['401']);
      assert.deepEqual(codesOf(doc, 'get', '/accounts/{account}/limits'), ['403', '422']);
      assert.deepEqual(codesOf(doc, 'post', '/withdraw/{account}/{amount}'), [
        '200',
        '404',
        '422',
        '500',
      ]);
      assert.deepEqual(codesOf(doc, 'get', '/crash'), ['500']);
      const crash = doc.paths['/crash']?.get?.responses['500'];
      assert.deepEqual(Object.keys(crash?.content ?? {}), ['text/plain']);
      assert.ok(
        doc.paths['/secret']?.get?.responses['401']?.headers,
        'the 401 documents its WWW-Authenticate header',
      );
    },
  );
  onBank(
    'in the unified format insufficient funds is documented as 400, and the catch-all 500 as JSON (D10)',
    CATCH_ALL,
    async (url) => {
      const doc = json(await get(url, '/openapi.json')) as Doc;
      assert.deepEqual(codesOf(doc, 'post', '/withdraw/{account}/{amount}'), [
        '200',
        '400',
        '404',
        '422',
      ]);
      assert.deepEqual(Object.keys(doc.paths['/crash']?.get?.responses['500']?.content ?? {}), [
        'application/json',
      ]);
    },
  );
});

describe('atomic withdrawals', { timeout: SUITE_TIMEOUT_MS }, () => {
  onBank(
    '200 simultaneous withdrawals of 1 from 100: exactly 100 succeed and the balance ends at 0',
    UNIFIED,
    async (url) => {
      const answers = await Promise.all(
        Array.from({ length: 200 }, () => withdraw(url, 'alice', 1)),
      );
      const succeeded = answers.filter((res) => res.status === 200);
      const refused = answers.filter((res) => res.status === 400);
      assert.equal(succeeded.length, 100);
      assert.equal(refused.length, 100);
      const balances = succeeded
        .map((res) => (json(res) as { balance: number }).balance)
        .sort((a, b) => a - b);
      assert.deepEqual(
        balances,
        Array.from({ length: 100 }, (_, i) => i),
        'each success saw a distinct balance, none below 0',
      );
      assert.equal(await balanceOf(url, 'alice'), 0);
    },
  );
});
