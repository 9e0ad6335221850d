// The comparison of two answers, one promise each: what counts as a difference, and where it is
// said to be.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareAnswers } from '../../src/migration/compare.js';
import { routeOf } from '../../src/migration/route-template.js';
import type { Answer } from '../../src/migration/send.js';

function answer(status: number, body: string, headers: Record<string, string> = {}): Answer {
  const bytes = Buffer.from(body);
  return { status, headers, body: bytes, bodyLength: bytes.length, truncated: undefined };
}
const json = (body: string, headers: Record<string, string> = {}): Answer =>
  answer(200, body, { 'content-type': 'application/json', ...headers });
const paths = (a: Answer, b: Answer): string[] => compareAnswers(a, b).map((d) => d.path);

test('bodies compare as JSON, field by field, key order aside', () => {
  assert.deepEqual(paths(json('{"a":1,"b":[1,2]}'), json('{ "b": [1, 2], "a": 1 }')), []);
  assert.deepEqual(paths(json('{"a":{"b":1,"c":2}}'), json('{"a":{"b":1,"d":2}}')), [
    '$.a.c',
    '$.a.d',
  ]);
  assert.deepEqual(paths(json('{"a b":[1,2,3]}'), json('{"a b":[1,3]}')), [
    '$["a b"][1]',
    '$["a b"][2]',
  ]);
});

test('numbers compare as written: a big integer exactly, and 1 is not 1.0', () => {
  assert.deepEqual(paths(json('{"n":9007199254740993}'), json('{"n":9007199254740992}')), ['$.n']);
  assert.deepEqual(paths(json('{"n":1}'), json('{"n":1.0}')), ['$.n']);
  assert.deepEqual(paths(json('{"n":"1"}'), json('{"n":1}')), ['$.n']);
});

test('the validation items of a 422 are paired by loc, whatever their order', () => {
  const a =
    '{"detail":[{"loc":["body","a"],"msg":"x","type":"t"},{"loc":["body","b"],"msg":"y","type":"t"}]}';
  const b =
    '{"detail":[{"loc":["body","b"],"msg":"y","type":"t"},{"loc":["body","a"],"msg":"X","type":"t"}]}';
  assert.deepEqual(paths(answer(422, a), answer(422, b)), ['$.detail[0].msg']);
});

test('a pydantic 1 item said in pydantic 2 words is marked so; another error is not', () => {
  const v1 =
    '{"detail":[{"loc":["path","id"],"msg":"value is not a valid integer","type":"type_error.integer"}]}';
  const v2 = (type: string): string =>
    `{"detail":[{"type":"${type}","loc":["path","id"],"msg":"m","input":"abc"}]}`;
  const same = compareAnswers(answer(422, v1), answer(422, v2('int_parsing')));
  assert.deepEqual(
    same.map((d) => d.pydantic),
    Array(3).fill('type_error.integer → int_parsing'),
  );
  const other = compareAnswers(answer(422, v1), answer(422, v2('string_type')));
  assert.deepEqual(
    other.map((d) => d.pydantic),
    [undefined, undefined, undefined],
  );
});

test('headers that matter: media type only where a body is, Allow as a set, ETag only as the primary has it', () => {
  const empty = (headers: Record<string, string>): Answer => answer(204, '', headers);
  assert.deepEqual(paths(empty({ 'content-type': 'application/json' }), empty({})), []);
  assert.deepEqual(
    paths(json('{}', { 'content-type': 'application/json; charset=utf-8' }), json('{}')),
    [],
  );
  assert.deepEqual(paths(json('{}'), answer(200, '{}', { 'content-type': 'text/plain' })), [
    'header content-type',
  ]);
  assert.deepEqual(paths(json('{}', { allow: 'GET, PUT' }), json('{}', { allow: 'put,get' })), []);
  assert.deepEqual(paths(json('{}', { etag: '"1"' }), json('{}')), ['header etag']);
  assert.deepEqual(paths(json('{}'), json('{}', { etag: '"1"' })), []);
  assert.deepEqual(paths(json('{}', { etag: '"1"' }), json('{}', { etag: 'W/"x"' })), []);
  assert.deepEqual(paths(json('{}', { location: '/a' }), json('{}', { location: '/b' })), [
    'header location',
  ]);
  assert.deepEqual(paths(json('{}', { 'x-request-id': 'a', date: 'x' }), json('{}')), []);
});

test('a body that is no JSON compares as bytes, and a status as a number', () => {
  assert.deepEqual(
    paths(answer(500, 'Internal Server Error'), answer(500, 'Internal Server Error')),
    [],
  );
  assert.deepEqual(paths(answer(500, 'oops'), answer(500, '{"error":1}')), ['body']);
  assert.deepEqual(paths(answer(200, ''), answer(201, '')), ['status']);
});

test('a route is the method and the path with its id segments as {id}, the query left out', () => {
  assert.equal(routeOf('get', '/todos/7?x=1'), 'GET /todos/{id}');
  assert.equal(routeOf('GET', '/todos/abc'), 'GET /todos/abc');
  assert.equal(
    routeOf('POST', '/accounts/3f2504e0-4f89-11d3-9a0c-0305e82c3301/items/-12/done'),
    'POST /accounts/{id}/items/{id}/done',
  );
  assert.equal(routeOf('GET', '/blobs/0123456789abcdef0123'), 'GET /blobs/{id}');
  assert.equal(routeOf('GET', '/v2/todos/1'), 'GET /v2/todos/{id}');
});
