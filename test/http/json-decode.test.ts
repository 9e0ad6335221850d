// Expected messages and positions are those of json.loads(body_bytes) in CPython 3.11.7.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BodyEncodingError, decodeJson, JsonSyntaxError } from '../../src/http/json/json-decode.js';
import { JsonObject, PyFloat, type JsonValue } from '../../src/http/json/json-value.js';

const DEPTH_MAX = 512;

function utf8(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

function bytesOf(...parts: (string | number[])[]): Uint8Array {
  const chunks = parts.map((part) =>
    typeof part === 'string' ? utf8(part) : Uint8Array.from(part),
  );
  const out = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}

function utf16(text: string, littleEndian: boolean): Uint8Array {
  const out = new Uint8Array(text.length * 2);
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    out[littleEndian ? 2 * i : 2 * i + 1] = unit & 0xff;
    out[littleEndian ? 2 * i + 1 : 2 * i] = unit >> 8;
  }
  return out;
}

function utf32(codePoints: number[], littleEndian: boolean): Uint8Array {
  const view = new DataView(new ArrayBuffer(codePoints.length * 4));
  codePoints.forEach((cp, k) => view.setUint32(4 * k, cp, littleEndian));
  return new Uint8Array(view.buffer);
}

function codePointsOf(text: string): number[] {
  return Array.from(text, (ch) => ch.codePointAt(0) ?? 0);
}

/** The decoded value with each JsonObject as a Map (in the same order), to compare with Map literals. */
type Compared = Exclude<JsonValue, JsonObject | JsonValue[]> | Compared[] | Map<string, Compared>;
function comparable(value: JsonValue): Compared {
  if (value instanceof JsonObject)
    return new Map([...value].map(([key, member]) => [key, comparable(member)]));
  if (Array.isArray(value)) return value.map(comparable);
  return value;
}

function decode(body: string | Uint8Array, depthMax = DEPTH_MAX): Compared {
  return comparable(decodeJson(typeof body === 'string' ? utf8(body) : body, depthMax));
}

function syntaxErrorOf(body: string | Uint8Array): { msg: string; pos: number } {
  try {
    decode(body);
  } catch (error: unknown) {
    if (error instanceof JsonSyntaxError) return { msg: error.msg, pos: error.pos };
    throw error;
  }
  assert.fail('the body decoded without a syntax error');
}

function assertUndecodable(body: string | Uint8Array, depthMax = DEPTH_MAX): void {
  assert.throws(() => decode(body, depthMax), BodyEncodingError);
}

const PROPERTY_NAME = 'Expecting property name enclosed in double quotes';

// --- recorded from the reference ---------------------------------------------------------------

test('a body of only whitespace is "Expecting value" just past the whitespace', () => {
  assert.deepEqual(syntaxErrorOf('   '), { msg: 'Expecting value', pos: 3 });
});

test("a trailing comma in an object is 'Expecting property name enclosed in double quotes' at the comma's next token", () => {
  assert.deepEqual(syntaxErrorOf('{"title": "x",}'), { msg: PROPERTY_NAME, pos: 14 });
});

test('a lone opening brace expects a property name at the end of the body', () => {
  assert.deepEqual(syntaxErrorOf('{'), { msg: PROPERTY_NAME, pos: 1 });
});

test('text that is not JSON is "Expecting value" at 0', () => {
  assert.deepEqual(syntaxErrorOf('not json'), { msg: 'Expecting value', pos: 0 });
});

test('single-quoted keys expect a property name enclosed in double quotes', () => {
  assert.deepEqual(syntaxErrorOf("{'title': 'x'}"), { msg: PROPERTY_NAME, pos: 1 });
});

test('text after the value is "Extra data" at its first non-whitespace character', () => {
  assert.deepEqual(syntaxErrorOf('{"title": "x"} trailing'), { msg: 'Extra data', pos: 15 });
});

test('NaN is rejected as "Expecting value" at its offset (deviation D6)', () => {
  assert.deepEqual(syntaxErrorOf('{"title": "x", "done": NaN}'), {
    msg: 'Expecting value',
    pos: 23,
  });
});

test('Infinity is rejected as "Expecting value" at its offset (deviation D6)', () => {
  assert.deepEqual(syntaxErrorOf('{"title": "i", "extra": Infinity}'), {
    msg: 'Expecting value',
    pos: 24,
  });
});

test('-Infinity is rejected as "Expecting value" at the minus sign (deviation D6)', () => {
  assert.deepEqual(syntaxErrorOf('-Infinity'), { msg: 'Expecting value', pos: 0 });
});

test('NaN inside a nested array is "Expecting value" at its offset', () => {
  assert.deepEqual(syntaxErrorOf('{"title": "p", "done": [1, NaN]}'), {
    msg: 'Expecting value',
    pos: 27,
  });
});

test('a UTF-8 byte order mark before the body is skipped', () => {
  const value = decode(bytesOf([0xef, 0xbb, 0xbf], '{"title": "bom"}'));
  assert.deepEqual(value, new Map([['title', 'bom']]));
});

test('bytes that are not UTF-8 make the body undecodable', () => {
  assertUndecodable(bytesOf('{"title": "', [0xff, 0xfe], '"}'));
});

test('a repeated key takes the last value', () => {
  assert.deepEqual(decode('{"title": "x", "title": "y"}'), new Map([['title', 'y']]));
});

test('20 nested arrays decode', () => {
  const value = decode('['.repeat(20) + ']'.repeat(20));
  let depth = 0;
  for (let node: Compared | undefined = value; Array.isArray(node); node = node[0]) depth++;
  assert.equal(depth, 20);
});

test('5000 nested arrays exceed a depth limit of 512 and make the body undecodable', () => {
  assertUndecodable('['.repeat(5000) + ']'.repeat(5000));
});

// --- grammar errors -----------------------------------------------------------------------------

test('a trailing comma in an array is "Expecting value" at the closing bracket', () => {
  assert.deepEqual(syntaxErrorOf('[1,]'), { msg: 'Expecting value', pos: 3 });
});

test('an unclosed array after a value expects a comma at the end of the body', () => {
  assert.deepEqual(syntaxErrorOf('[1, 2'), { msg: "Expecting ',' delimiter", pos: 5 });
});

test('an opening bracket alone expects a value at the end of the body', () => {
  assert.deepEqual(syntaxErrorOf('['), { msg: 'Expecting value', pos: 1 });
});

test('array items without a comma are "Expecting \',\' delimiter" at the second item', () => {
  assert.deepEqual(syntaxErrorOf('[1 2]'), { msg: "Expecting ',' delimiter", pos: 3 });
});

test('object members without a comma are "Expecting \',\' delimiter" at the second key', () => {
  assert.deepEqual(syntaxErrorOf('{"a": 1 "b": 2}'), { msg: "Expecting ',' delimiter", pos: 8 });
});

test('a key without a colon is "Expecting \':\' delimiter" after the key', () => {
  assert.deepEqual(syntaxErrorOf('{"a" 1}'), { msg: "Expecting ':' delimiter", pos: 5 });
});

test('a member cut off after its colon expects a value at the end of the body', () => {
  assert.deepEqual(syntaxErrorOf('{"a": '), { msg: 'Expecting value', pos: 6 });
});

test('a truncated literal is "Expecting value" at its first letter', () => {
  assert.deepEqual(syntaxErrorOf('nul'), { msg: 'Expecting value', pos: 0 });
  assert.deepEqual(syntaxErrorOf('[tru]'), { msg: 'Expecting value', pos: 1 });
});

test('only space, tab, line feed and carriage return count as whitespace', () => {
  assert.deepEqual(decode(' \t\n\r1 \t\n\r'), 1);
  assert.deepEqual(syntaxErrorOf('\f1'), { msg: 'Expecting value', pos: 0 });
  assert.deepEqual(syntaxErrorOf('\u00a01'), { msg: 'Expecting value', pos: 0 });
});

// --- strings --------------------------------------------------------------------------------------

test('an unterminated string is reported at its opening quote', () => {
  assert.deepEqual(syntaxErrorOf('["abc'), { msg: 'Unterminated string starting at', pos: 1 });
});

test('a string ending in a backslash is unterminated at its opening quote', () => {
  assert.deepEqual(syntaxErrorOf('"\\'), { msg: 'Unterminated string starting at', pos: 0 });
});

test('a raw control character in a string is "Invalid control character at" its offset', () => {
  assert.deepEqual(syntaxErrorOf('"a\u0001"'), { msg: 'Invalid control character at', pos: 2 });
  assert.deepEqual(syntaxErrorOf('"a\nb"'), { msg: 'Invalid control character at', pos: 2 });
});

test('DEL and other non-control characters are allowed raw in strings', () => {
  assert.equal(decode('"\u007f\u2028é"'), '\u007f\u2028é');
});

test('an unknown escape is "Invalid \\escape" at the backslash', () => {
  assert.deepEqual(syntaxErrorOf('"ab\\x"'), { msg: 'Invalid \\escape', pos: 3 });
});

test('a \\u escape with too few characters left is "Invalid \\uXXXX escape" at the u', () => {
  assert.deepEqual(syntaxErrorOf('"\\u12"'), { msg: 'Invalid \\uXXXX escape', pos: 2 });
  assert.deepEqual(syntaxErrorOf('"\\u0041'), { msg: 'Invalid \\uXXXX escape', pos: 2 });
});

test('a \\u escape with a non-hex digit is "Invalid \\uXXXX escape" at the u', () => {
  assert.deepEqual(syntaxErrorOf('"\\u12x4"'), { msg: 'Invalid \\uXXXX escape', pos: 2 });
});

test('a bad escape after a high surrogate escape is reported at its own u', () => {
  assert.deepEqual(syntaxErrorOf('"\\ud83d\\uZZZZ"'), { msg: 'Invalid \\uXXXX escape', pos: 8 });
});

test('the simple escapes decode to their characters', () => {
  assert.equal(
    decode('"\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\u00E9"'),
    '" \\ / \b \f \n \r \t é é',
  );
});

test('an escaped surrogate pair becomes one character', () => {
  assert.equal(decode('"\\ud83d\\ude00"'), '😀');
});

test('a lone escaped surrogate is kept as a lone UTF-16 code unit (deviation D7)', () => {
  const value = decode('"\\ud800x"');
  assert.equal(typeof value === 'string' ? value.charCodeAt(0) : -1, 0xd800);
  assert.equal(value, '\ud800x');
});

test('a high surrogate escape followed by a non-surrogate escape gives two characters', () => {
  assert.equal(decode('"\\ud83d\\u0041"'), '\ud83dA');
});

// --- numbers --------------------------------------------------------------------------------------

test('safe integers decode to numbers', () => {
  assert.deepEqual(
    decode('[0, 7, -12, 9007199254740991, -9007199254740991]'),
    [0, 7, -12, 9007199254740991, -9007199254740991],
  );
});

test('minus zero as an integer is plain 0', () => {
  assert.ok(Object.is(decode('-0'), 0));
});

test('integers beyond 2^53-1 decode to exact bigints', () => {
  assert.deepEqual(
    decode('[9007199254740992, -9007199254740992, 123456789012345678901234567890]'),
    [9007199254740992n, -9007199254740992n, 123456789012345678901234567890n],
  );
});

test('an integer of 4300 digits decodes and one of 4301 digits makes the body undecodable', () => {
  assert.equal(decode('9'.repeat(4300)), 10n ** 4300n - 1n);
  assertUndecodable('-' + '9'.repeat(4301));
});

test('the sign is not a digit: minus and 4300 digits decodes', () => {
  assert.equal(decode('-' + '9'.repeat(4300)), -(10n ** 4300n - 1n));
  assertUndecodable('9'.repeat(4301));
});

test('numbers with a fraction or an exponent decode to PyFloat', () => {
  assert.deepEqual(decode('[1.0, 1.5, -0.25, 1E+2, 2e-3, 1e5]'), [
    new PyFloat(1),
    new PyFloat(1.5),
    new PyFloat(-0.25),
    new PyFloat(100),
    new PyFloat(0.002),
    new PyFloat(100000),
  ]);
});

test('minus zero as a float keeps its sign', () => {
  const value = decode('-0.0');
  assert.ok(value instanceof PyFloat && Object.is(value.value, -0));
});

test('a float beyond the double range decodes to infinity like Python', () => {
  assert.deepEqual(decode('[1e400, -1e400]'), [new PyFloat(Infinity), new PyFloat(-Infinity)]);
});

test('a dot or an exponent without digits ends the number before it', () => {
  assert.deepEqual(syntaxErrorOf('1.'), { msg: 'Extra data', pos: 1 });
  assert.deepEqual(syntaxErrorOf('1e'), { msg: 'Extra data', pos: 1 });
  assert.deepEqual(syntaxErrorOf('1.5e+'), { msg: 'Extra data', pos: 3 });
});

test('a leading zero ends the number after the zero', () => {
  assert.deepEqual(syntaxErrorOf('01'), { msg: 'Extra data', pos: 1 });
});

test('a minus sign without digits is "Expecting value" at the sign', () => {
  assert.deepEqual(syntaxErrorOf('-'), { msg: 'Expecting value', pos: 0 });
  assert.deepEqual(syntaxErrorOf('[-]'), { msg: 'Expecting value', pos: 1 });
});

// --- objects --------------------------------------------------------------------------------------

test('objects decode to Maps in key order', () => {
  const value = decode('{"b": 1, "a": [true, false, null], "c": {}}');
  assert.ok(value instanceof Map);
  assert.deepEqual([...value.keys()], ['b', 'a', 'c']);
  assert.deepEqual(value.get('a'), [true, false, null]);
  assert.deepEqual(value.get('c'), new Map());
});

test('a repeated key keeps its first position', () => {
  const value = decode('{"a": 1, "b": 2, "a": 3}');
  assert.ok(value instanceof Map);
  assert.deepEqual(
    [...value.entries()],
    [
      ['a', 3],
      ['b', 2],
    ],
  );
});

test('a "__proto__" key is an ordinary Map entry, like any other key', () => {
  const value = decode('{"__proto__": {"polluted": true}}');
  assert.ok(value instanceof Map);
  assert.deepEqual([...value.entries()], [['__proto__', new Map([['polluted', true]])]]);
});

// --- positions in code points ---------------------------------------------------------------------

test('positions after an emoji count it as one character', () => {
  assert.deepEqual(syntaxErrorOf('["😀", x]'), { msg: 'Expecting value', pos: 6 });
  assert.deepEqual(syntaxErrorOf('{"😀": 1 2}'), { msg: "Expecting ',' delimiter", pos: 8 });
  assert.deepEqual(syntaxErrorOf('"😀\u0001"'), { msg: 'Invalid control character at', pos: 2 });
});

test('positions in a UTF-16 body count characters, not bytes', () => {
  assert.deepEqual(syntaxErrorOf(utf16('[1,]', true)), { msg: 'Expecting value', pos: 3 });
  assert.deepEqual(syntaxErrorOf(utf16('["😀", x]', false)), { msg: 'Expecting value', pos: 6 });
});

// --- encodings ------------------------------------------------------------------------------------

test('UTF-16-LE without a byte order mark is detected from its zero bytes', () => {
  assert.deepEqual(decode(utf16('{"a": "é😀"}', true)), new Map([['a', 'é😀']]));
});

test('UTF-16-BE without a byte order mark is detected from its zero bytes', () => {
  assert.deepEqual(decode(utf16('{"a": "é😀"}', false)), new Map([['a', 'é😀']]));
});

test('a two-byte body with a zero byte is UTF-16', () => {
  assert.equal(decode(bytesOf('1', [0])), 1);
  assert.equal(decode(bytesOf([0], '1')), 1);
});

test('UTF-16 with a byte order mark decodes in either byte order', () => {
  assert.deepEqual(decode(bytesOf([0xff, 0xfe], Array.from(utf16('[1]', true)))), [1]);
  assert.deepEqual(decode(bytesOf([0xfe, 0xff], Array.from(utf16('[1]', false)))), [1]);
});

test('UTF-16 with an odd number of bytes makes the body undecodable', () => {
  assertUndecodable(bytesOf([0xff, 0xfe], '1'));
});

test('UTF-16 keeps lone surrogates (surrogatepass)', () => {
  assert.equal(decode(utf16('"\ud800"', true)), '\ud800');
});

test('UTF-32-LE and UTF-32-BE without a byte order mark are detected from their zero bytes', () => {
  assert.deepEqual(decode(utf32(codePointsOf('["é😀"]'), true)), ['é😀']);
  assert.deepEqual(decode(utf32(codePointsOf('["é😀"]'), false)), ['é😀']);
});

test('UTF-32 with a byte order mark decodes in either byte order', () => {
  assert.deepEqual(decode(utf32(codePointsOf('\ufeff[1]'), true)), [1]);
  assert.deepEqual(decode(utf32(codePointsOf('\ufeff[1]'), false)), [1]);
});

test('UTF-32 beyond U+10FFFF makes the body undecodable', () => {
  assertUndecodable(utf32([0x31, 0x110000], true));
});

test('UTF-32 whose length is not a multiple of four makes the body undecodable', () => {
  assertUndecodable(bytesOf([0xff, 0xfe, 0, 0], [0x31, 0, 0]));
});

test('only one UTF-8 byte order mark is skipped', () => {
  assert.deepEqual(syntaxErrorOf(bytesOf([0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf], '1')), {
    msg: 'Expecting value',
    pos: 0,
  });
});

test('UTF-8-encoded surrogates are accepted as lone surrogates (surrogatepass)', () => {
  assert.equal(decode(bytesOf('"', [0xed, 0xa0, 0x80], '"')), '\ud800');
});

test('two UTF-8-encoded surrogates count as two characters in positions', () => {
  const body = bytesOf('"', [0xed, 0xa0, 0x80, 0xed, 0xb0, 0x80], '" x');
  assert.deepEqual(syntaxErrorOf(body), { msg: 'Extra data', pos: 5 });
});

test('two UTF-32 surrogate units count as two characters in positions', () => {
  const body = utf32([0x22, 0xd800, 0xdc00, 0x22, 0x20, 0x78], true);
  assert.deepEqual(syntaxErrorOf(body), { msg: 'Extra data', pos: 5 });
});

test('overlong, truncated and stray UTF-8 sequences make the body undecodable', () => {
  assertUndecodable(bytesOf('"', [0xc0, 0x80], '"'));
  assertUndecodable(bytesOf('"', [0xe0, 0x80, 0x80], '"'));
  assertUndecodable(bytesOf('"', [0x80], '"'));
  assertUndecodable(bytesOf('"', [0xed, 0xa0]));
  assertUndecodable(bytesOf('"', [0xf4, 0x90, 0x80, 0x80], '"'));
});

test('an undecodable byte wins over an earlier syntax error', () => {
  assertUndecodable(bytesOf('x', [0xff]));
});

// --- depth ----------------------------------------------------------------------------------------

test('nesting exactly at the depth limit decodes and one level more is undecodable', () => {
  assert.ok(Array.isArray(decode('['.repeat(DEPTH_MAX) + ']'.repeat(DEPTH_MAX))));
  assertUndecodable('['.repeat(DEPTH_MAX + 1) + ']'.repeat(DEPTH_MAX + 1));
});

test('objects count towards the depth limit like arrays', () => {
  assertUndecodable('{"a": ['.repeat(3) + '1' + ']}'.repeat(3), 5);
  assert.ok(decode('{"a": ['.repeat(3) + '1' + ']}'.repeat(3), 6) instanceof Map);
});

test('a syntax error before the depth limit is reached is still a syntax error', () => {
  assert.deepEqual(syntaxErrorOf('[[x' + '['.repeat(5000)), { msg: 'Expecting value', pos: 2 });
});

test('1,000,000 opening brackets are undecodable without overflowing the stack', () => {
  assertUndecodable('['.repeat(1_000_000));
});

test('1,000,000 nested arrays decode without recursion when the limit allows them', () => {
  const levels = 1_000_000;
  const value = decodeJson(utf8('['.repeat(levels) + ']'.repeat(levels)), Infinity);
  let depth = 0;
  for (let node: JsonValue | undefined = value; Array.isArray(node); node = node[0]) depth++;
  assert.equal(depth, levels);
});
