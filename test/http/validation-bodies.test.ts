// A 422's items are written from their known members (render.ts), not walked by the JSON encoder as
// objects. Each format's body must still be, byte for byte, what the encoder writes for the same
// items as objects: the same members, in the same order, with the same escapes and the same cut of
// a long input.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidRequest, invalidRequest, type ValidationItem } from '../../src/http/errors.js';
import { Bounded, encodeJson } from '../../src/http/json/json-encode.js';
import { JsonObject } from '../../src/http/json/json-value.js';
import { ECHO_CHARS_MAX, renderError, type ErrorFormatName } from '../../src/http/render.js';

const ITEMS: readonly ValidationItem[] = [
  {
    type: 'missing',
    loc: ['body', 'title'],
    msg: 'Field required',
    input: new JsonObject(['done', true]),
  },
  {
    type: 'int_parsing',
    loc: ['path', 'amount'],
    msg: 'Input should be a valid integer, unable to parse string as an integer',
    input: 'x"\\\u0001é',
  },
  {
    type: 'greater_than_equal',
    loc: ['path', 'todo_id'],
    msg: 'Input should be greater than or equal to 1',
    input: '0',
    ctx: { ge: 1 },
  },
  {
    type: 'json_invalid',
    loc: ['body', 17],
    msg: 'JSON decode error',
    input: {},
    ctx: { error: 'Expecting value' },
  },
  {
    type: 'string_type',
    loc: ['body', 'ti/t~le', 0],
    msg: 'Input should be a valid string \ud800',
    input: 'y'.repeat(ECHO_CHARS_MAX + 10),
  },
];

/** The body's text as the encoder writes the items as objects, in the member order of each format. */
const EXPECTED_ITEMS = {
  default: encodeJson(
    ITEMS.map((item) => ({ ...item, input: new Bounded(item.input, ECHO_CHARS_MAX) })),
  ),
  unified: encodeJson(ITEMS.map((item) => ({ field: item.loc.join('.'), message: item.msg }))),
  problem: encodeJson(
    ITEMS.map((item) =>
      item.loc[0] === 'path'
        ? { detail: item.msg, parameter: String(item.loc[1]), type: item.type }
        : { detail: item.msg, pointer: pointerOf(item), type: item.type },
    ),
  ),
};

function pointerOf(item: ValidationItem): string {
  const members = item.type === 'json_invalid' ? [] : item.loc.slice(1);
  return `#${members.map((member) => `/${encodeURIComponent(String(member).replaceAll('~', '~0').replaceAll('/', '~1'))}`).join('')}`;
}

function bodyOf(name: ErrorFormatName, error: unknown): string {
  const rendered = renderError(error, { name, catchAll: false });
  assert.equal(rendered.status, 422);
  return rendered.body;
}

describe('422 bodies written from the items', () => {
  test('default: the body is {"detail": the items as the encoder writes them, each input cut to its limit}', () => {
    assert.equal(
      bodyOf('default', new InvalidRequest(ITEMS)),
      `{"detail":${EXPECTED_ITEMS.default}}`,
    );
  });

  test('unified: the fields are the items as the encoder writes {field, message}', () => {
    const body = bodyOf('unified', new InvalidRequest(ITEMS));
    assert.ok(body.endsWith(`,"fields":${EXPECTED_ITEMS.unified}}}`), body);
  });

  test('problem: the errors are the items as the encoder writes {detail, parameter or pointer, type}', () => {
    const body = bodyOf('problem', new InvalidRequest(ITEMS));
    assert.ok(body.endsWith(`,"errors":${EXPECTED_ITEMS.problem}}`), body);
  });

  test('a thrown validation failure gives the same bodies as one handed back', () => {
    for (const name of ['default', 'unified', 'problem'] as const) {
      assert.equal(bodyOf(name, invalidRequest(ITEMS)), bodyOf(name, new InvalidRequest(ITEMS)));
    }
  });

  test('every body is JSON, and a long input comes back cut', () => {
    const parsed = JSON.parse(bodyOf('default', new InvalidRequest(ITEMS))) as {
      detail: { input: unknown }[];
    };
    const echoed = parsed.detail[4]?.input;
    assert.equal(typeof echoed, 'string');
    assert.ok((echoed as string).length < ECHO_CHARS_MAX);
    for (const name of ['unified', 'problem'] as const)
      JSON.parse(bodyOf(name, new InvalidRequest(ITEMS)));
  });
});
