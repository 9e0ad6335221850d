// A decoded JSON object is a JsonObject, not a Map (see json-value.ts for why), but it is handed to
// code that reads it as a ReadonlyMap: every question that interface asks must get the answer a Map
// with the same entries gives.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JsonObject, PyFloat, type JsonValue } from '../../src/http/json/json-value.js';

const ENTRIES: [string, JsonValue][] = [
  ['title', 'milk'],
  ['done', false],
  ['', null],
  ['n', 1],
  ['x', new PyFloat(1)],
];

function both(): { object: JsonObject; map: Map<string, JsonValue> } {
  return { object: JsonObject.fromEntries(ENTRIES), map: new Map(ENTRIES) };
}

test('a decoded object has the size, keys, values and entries of a Map with the same entries, in order', () => {
  const { object, map } = both();
  assert.equal(object.size, map.size);
  assert.deepEqual([...object.keys()], [...map.keys()]);
  assert.deepEqual([...object.values()], [...map.values()]);
  assert.deepEqual([...object.entries()], [...map.entries()]);
  assert.deepEqual([...object], [...map]);
});

test('a decoded object finds each of its keys, the empty one included, and nothing else', () => {
  const { object, map } = both();
  for (const key of [...map.keys(), 'missing', 'Title', 'milk', '0']) {
    assert.equal(object.has(key), map.has(key), `has(${JSON.stringify(key)})`);
    assert.equal(object.get(key), map.get(key), `get(${JSON.stringify(key)})`);
  }
});

test('a value that is itself a key of the object is not taken for a key', () => {
  // Keys and values sit side by side in one array: a lookup must look at keys only.
  const object = JsonObject.fromEntries([
    ['a', 'b'],
    ['c', 'a'],
  ]);
  assert.equal(object.has('b'), false);
  assert.equal(object.get('b'), undefined);
  assert.equal(object.get('a'), 'b');
});

test('forEach visits value, key and the object itself in order, with the given this', () => {
  const { object } = both();
  const self = { seen: [] as [JsonValue, string][] };
  object.forEach(function (this: typeof self, value, key, owner) {
    assert.equal(owner, object);
    this.seen.push([value, key]);
  }, self);
  assert.deepEqual(
    self.seen,
    ENTRIES.map(([key, value]) => [value, key]),
  );
});

test('fromEntries keeps the first place of a repeated key and takes its last value, like a Python dict', () => {
  const object = JsonObject.fromEntries([
    ['a', 1],
    ['b', 2],
    ['a', 3],
  ]);
  assert.deepEqual(
    [...object],
    [
      ['a', 3],
      ['b', 2],
    ],
  );
  assert.equal(object.size, 2);
});

test('an empty object has no entries', () => {
  const object = new JsonObject([]);
  assert.equal(object.size, 0);
  assert.deepEqual([...object.entries()], []);
  assert.deepEqual([...object.keys()], []);
  assert.deepEqual([...object.values()], []);
  assert.equal(object.has(''), false);
});
