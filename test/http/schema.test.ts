// The schemas' own promises: the checks intParam makes when a route is declared (so a bad
// declaration stops the service at start-up, not at the first request), the JSON Schema it states,
// and a model that records issues and hands back nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JsonObject } from '../../src/http/json/json-value.js';
import { intParam, model, strField, type Issues } from '../../src/http/validation/schema.js';

test('intParam refuses a bound that is not a safe integer', () => {
  for (const bounds of [
    { gt: 0.5, le: 5 },
    { ge: 0, le: 2 ** 53 },
    { ge: -Infinity, le: 5 },
    { ge: 0, le: NaN },
  ]) {
    assert.throws(
      () => intParam({ title: 'N', ...bounds }),
      /^Error: bound .+ is not a safe integer$/,
      JSON.stringify(bounds),
    );
  }
});

test('intParam needs an upper bound and a lower one, so that every value it reads is a safe integer', () => {
  const refused =
    /^Error: intParam needs an upper and a lower bound inside the safe integer range$/;
  assert.throws(() => intParam({ title: 'N', ge: 1 }), refused);
  assert.throws(() => intParam({ title: 'N', gt: 1 }), refused);
  assert.throws(() => intParam({ title: 'N', le: 1 }), refused);
  assert.doesNotThrow(() => intParam({ title: 'N', gt: 0, le: 1 }));
  assert.doesNotThrow(() => intParam({ title: 'N', ge: 0, le: 1 }));
});

test("intParam's JSON Schema states exactly the bounds it was given", () => {
  assert.deepEqual(intParam({ title: 'Id', ge: 1, le: 10 }).jsonSchema, {
    type: 'integer',
    maximum: 10,
    minimum: 1,
    title: 'Id',
  });
  assert.deepEqual(intParam({ title: 'Id', gt: 0, le: 10 }).jsonSchema, {
    type: 'integer',
    maximum: 10,
    exclusiveMinimum: 0,
    title: 'Id',
  });
});

test('a model with an issue in any field records it and gives back no value', () => {
  const spec = model('Thing', { name: strField('Name'), other: strField('Other') });
  const issues: Issues = [];
  const body = JsonObject.fromEntries([
    ['name', 'ok'],
    ['other', 1],
  ]);
  assert.equal(spec.fromBody(body, ['body'], issues), undefined);
  assert.deepEqual(issues, [
    {
      type: 'string_type',
      loc: ['body', 'other'],
      msg: 'Input should be a valid string',
      input: 1,
    },
  ]);
  const fine: Issues = [];
  assert.deepEqual(
    spec.fromBody(
      JsonObject.fromEntries([
        ['name', 'a'],
        ['other', 'b'],
      ]),
      ['body'],
      fine,
    ),
    { name: 'a', other: 'b' },
  );
  assert.deepEqual(fine, []);
});
