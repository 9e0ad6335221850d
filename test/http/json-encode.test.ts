// Expected texts are those of json.dumps(value, ensure_ascii=False, separators=(",", ":")) in CPython 3.11.7.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Bounded, encodeJson } from '../../src/http/json-encode.js';
import { PyFloat } from '../../src/http/json-value.js';

test('constants are written as null, true and false', () => {
  assert.equal(encodeJson([null, true, false]), '[null,true,false]');
});

test('containers are written compactly without spaces', () => {
  assert.equal(encodeJson({ a: [1, 2], b: {} }), '{"a":[1,2],"b":{}}');
});

test('Maps are written in their insertion order', () => {
  const value = new Map<string, unknown>([
    ['z', 1],
    ['a', new Map([['y', []]])],
  ]);
  assert.equal(encodeJson(value), '{"z":1,"a":{"y":[]}}');
});

test('a "__proto__" Map key is written like any other key', () => {
  assert.equal(encodeJson(new Map([['__proto__', 1]])), '{"__proto__":1}');
});

test('plain objects are written in JS key order', () => {
  assert.equal(encodeJson({ b: 1, a: 2 }), '{"b":1,"a":2}');
});

test('undefined object properties are skipped', () => {
  assert.equal(encodeJson({ a: undefined, b: 1 }), '{"b":1}');
});

test('bigints are written exactly', () => {
  assert.equal(encodeJson([123456789012345678901234567890n, -9007199254740993n]), '[123456789012345678901234567890,-9007199254740993]');
});

test('plain numbers are written as JSON.stringify writes them', () => {
  assert.equal(encodeJson([0, -0, 42, -7, 9007199254740991]), '[0,0,42,-7,9007199254740991]');
});

test('integral PyFloats get a ".0" like Python repr', () => {
  assert.equal(encodeJson([new PyFloat(1), new PyFloat(-3), new PyFloat(123456789012345)]), '[1.0,-3.0,123456789012345.0]');
});

test('PyFloats use the shortest round-trip digits', () => {
  assert.equal(encodeJson([new PyFloat(1.5), new PyFloat(0.1), new PyFloat(2 / 3)]), '[1.5,0.1,0.6666666666666666]');
});

test('PyFloats of 1e16 and beyond use a signed two-digit exponent', () => {
  assert.equal(
    encodeJson([new PyFloat(1e16), new PyFloat(1.2345678901234568e16), new PyFloat(1e100), new PyFloat(-2.5e300)]),
    '[1e+16,1.2345678901234568e+16,1e+100,-2.5e+300]',
  );
});

test('PyFloats just below 1e16 are still positional', () => {
  assert.equal(encodeJson(new PyFloat(9999999999999998)), '9999999999999998.0');
});

test('PyFloats below 1e-4 use an exponent and 1e-4 does not', () => {
  assert.equal(encodeJson([new PyFloat(0.0001), new PyFloat(0.00001), new PyFloat(1.5e-7), new PyFloat(5e-324)]), '[0.0001,1e-05,1.5e-07,5e-324]');
});

test('PyFloat zero keeps its sign', () => {
  assert.equal(encodeJson([new PyFloat(0), new PyFloat(-0)]), '[0.0,-0.0]');
});

test('non-finite PyFloats are written as null', () => {
  assert.equal(encodeJson([new PyFloat(Infinity), new PyFloat(-Infinity), new PyFloat(NaN)]), '[null,null,null]');
});

test('non-ASCII characters are written raw', () => {
  assert.equal(encodeJson('é😀\u2028\u007f'), '"é😀\u2028\u007f"');
});

test('quotes, backslashes and control characters are escaped like Python', () => {
  assert.equal(encodeJson('"\\/\b\f\n\r\t\u0000\u001f'), '"\\"\\\\/\\b\\f\\n\\r\\t\\u0000\\u001f"');
});

test('lone surrogates are written as \\u escapes (deviation D7)', () => {
  assert.equal(encodeJson('a\ud800b\udfff'), '"a\\ud800b\\udfff"');
});

test('keys are escaped like strings', () => {
  assert.equal(encodeJson(new Map([['a"\n', 1]])), '{"a\\"\\n":1}');
});

test('a circular structure is refused', () => {
  const looped: unknown[] = [];
  looped.push(looped);
  assert.throws(() => encodeJson(looped), TypeError);
});

test('a value shared by two branches is written twice', () => {
  const shared = [1];
  assert.equal(encodeJson([shared, shared]), '[[1],[1]]');
});

test('a Bounded value is written whole when it fits', () => {
  const value = new Map<string, unknown>([['a', [1, 'two', null]]]);
  assert.equal(encodeJson({ input: new Bounded(value, 100) }), '{"input":{"a":[1,"two",null]}}');
});

test('a Bounded array keeps its first items, and a Bounded string its first characters, within the room', () => {
  const encoded = encodeJson(new Bounded(Array.from({ length: 1000 }, (_, k) => k), 50));
  assert.ok(encoded.length <= 55, encoded);
  assert.deepEqual(JSON.parse(encoded), Array.from({ length: (JSON.parse(encoded) as number[]).length }, (_, k) => k));
  assert.equal(encodeJson(new Bounded('abcdefghij', 7)), '"abcde"');
});

test('a Bounded string is never cut inside a surrogate pair or an escape', () => {
  assert.equal(encodeJson(new Bounded('😀😀😀', 5)), '"😀"');
  assert.equal(encodeJson(new Bounded('\u0001\u0001\u0001', 10)), '"\\u0001"');
});

test('a Bounded object stops adding members once its room is used, and cuts long keys', () => {
  const value = new Map(Array.from({ length: 100 }, (_, k) => [`key${k}`, k] as const));
  const encoded = encodeJson(new Bounded(value, 40));
  assert.ok(encoded.length <= 50, encoded);
  assert.ok(encoded.startsWith('{"key0":0,"key1":1'), encoded);
  assert.equal(encodeJson(new Bounded(new Map([['k'.repeat(100), 1]]), 10)), '{"kkkkkkkk":1}');
});
