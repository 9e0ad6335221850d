// The fast decoder against the reference port of CPython's scanner (test/support/json-decode-reference.ts),
// on inputs generated from fixed seeds: JSON with every kind of token (escapes and surrogates,
// integers around 2^53 and past 15 digits, floats the fast path can and cannot round, duplicate keys,
// nesting, whitespace), then the same texts broken by one edit or cut short. For every input both
// give the same value (same types, same key order, same float bits) or the same error at the same place.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeShapes } from '../../bench/decode-shapes.js';
import { BodyEncodingError, decodeJson, JsonSyntaxError } from '../../src/http/json-decode.js';
import { PyFloat, type JsonValue } from '../../src/http/json-value.js';
import { ReferenceSyntaxError, referenceParse } from '../support/json-decode-reference.js';
import { seededRandom } from '../support/load.js';

const DEPTH_MAX = 512;

/** A value written out with its types: Map order, int versus float, the bits of a float (-0 included). */
function tagged(value: JsonValue): string {
  if (value === null || typeof value === 'boolean') return String(value);
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') return `int:${value}`;
  if (typeof value === 'bigint') return `big:${value}`;
  if (value instanceof PyFloat) return `float:${Object.is(value.value, -0) ? '-0' : String(value.value)}`;
  if (Array.isArray(value)) return `[${value.map(tagged).join(',')}]`;
  return `{${[...value].map(([k, v]) => `${JSON.stringify(k)}:${tagged(v)}`).join(',')}}`;
}

/** What decoding gave: the tagged value, or the error with Python's position in code points. */
function outcome(decode: () => JsonValue, toCodePoints: (unit: number) => number): string {
  try {
    return `ok ${tagged(decode())}`;
  } catch (error) {
    if (error instanceof JsonSyntaxError) return `syntax ${error.msg} @${error.pos}`;
    if (error instanceof ReferenceSyntaxError) return `syntax ${error.msg} @${toCodePoints(error.unit)}`;
    if (error instanceof BodyEncodingError) return 'undecodable';
    throw error;
  }
}

function assertSameAsReference(generated: string, what: string): void {
  const bytes = Buffer.from(generated, 'utf8');
  // An edit may split a surrogate pair, which UTF-8 cannot carry: compare on the text the bytes hold.
  // That text is well-formed UTF-16, so a code point count is Array.from's length.
  const text = bytes.toString('utf8');
  const toCodePoints = (unit: number): number => Array.from(text.slice(0, unit)).length;
  const fast = outcome(() => decodeJson(bytes, DEPTH_MAX), toCodePoints);
  const reference = outcome(() => referenceParse(text, DEPTH_MAX), toCodePoints);
  if (fast !== reference) assert.fail(`${what}: ${JSON.stringify(text.slice(0, 300))}\n  fast:      ${fast.slice(0, 300)}\n  reference: ${reference.slice(0, 300)}`);
}

// ------------------------------------------------------------------------------------ generation

type Next = (min: number, max: number) => number;

function pick<T>(next: Next, items: readonly T[]): T {
  return items[next(0, items.length - 1)] as T;
}

const STRING_PIECES = ['a', 'title', ' ', 'é', '😀', '\u2028', '\u007f', '\\"', '\\\\', '\\/', '\\b', '\\f', '\\n', '\\r', '\\t',
  '\\u0041', '\\u00e9', '\\u00E9', '\\ud83d\\ude00', '\\ud800', '\\udc00', '\\ud83d\\u0041', '\\ud83dx', '\\uD834\\uDD1E', '\\u0000', '\\u001f'];

function randomString(next: Next): string {
  let out = '"';
  for (let k = next(0, 6); k > 0; k--) out += pick(next, STRING_PIECES);
  return `${out}"`;
}

function digits(next: Next, count: number): string {
  let out = String(next(1, 9));
  for (let k = 1; k < count; k++) out += String(next(0, 9));
  return out;
}

const NUMBER_EDGES = ['0', '-0', '9007199254740991', '-9007199254740991', '9007199254740992', '-9007199254740992',
  '9007199254740993', '999999999999999', '1000000000000000', '9999999999999999', '18446744073709551616',
  '0.0', '-0.0', '1.0', '0.1', '0.5', '1e22', '1e23', '1E-22', '1e-23', '9007199254740993.0', '9007199254740991.5',
  '5e-324', '2.2250738585072014e-308', '1.7976931348623157e308', '1e400', '-1e400', '1e-400', '123456789012345678e-5',
  '0.000001', '1.5e+2', '2E3', '0e0', '-0e-0', '1.00000000000000000000001', '3.141592653589793238462643383279'];

function randomNumber(next: Next): string {
  switch (next(0, 5)) {
    case 0:
      return pick(next, NUMBER_EDGES);
    case 1:
      return `${next(0, 1) === 1 ? '-' : ''}${digits(next, next(1, 25))}`;
    case 2:
      return `${next(0, 1) === 1 ? '-' : ''}${digits(next, next(1, 18))}.${digits(next, next(1, 18))}`;
    case 3:
      return `${digits(next, next(1, 17))}${pick(next, ['e', 'E'])}${pick(next, ['', '+', '-'])}${next(0, 330)}`;
    case 4:
      return `${next(0, 9)}.${'0'.repeat(next(0, 20))}${digits(next, next(1, 5))}e${pick(next, ['', '-'])}${next(0, 30)}`;
    default:
      return String(next(0, 1000));
  }
}

function randomValue(next: Next, depth: number): string {
  const roll = next(0, depth > 6 ? 5 : 8);
  if (roll <= 1) return randomString(next);
  if (roll <= 3) return randomNumber(next);
  if (roll <= 5) return pick(next, ['true', 'false', 'null']);
  const ws = (): string => pick(next, ['', '', '', ' ', '\n', '\t', '\r\n  ']);
  const count = next(0, 5);
  if (roll <= 6) return `[${ws()}${Array.from({ length: count }, () => randomValue(next, depth + 1) + ws()).join(`,${ws()}`)}]`;
  // Few distinct keys, so that objects repeat them.
  const keys = ['"a"', '"b"', '"1"', '"__proto__"', '"\\u0061"', '"é"', '""'];
  return `{${ws()}${Array.from({ length: count }, () => `${pick(next, keys)}${ws()}:${ws()}${randomValue(next, depth + 1)}${ws()}`).join(`,${ws()}`)}}`;
}

/** An object of more members than the decoder checks one by one, keys often repeated, some far apart. */
function wideObject(next: Next): string {
  const keyCount = next(9, 40);
  const members = Array.from({ length: next(9, 60) }, () => `"k${next(0, keyCount)}":${randomValue(next, 5)}`);
  return `{${members.join(',')}}`;
}

const BREAKERS = ['"', '\\', '{', '}', '[', ']', ',', ':', '.', 'e', '-', '+', '0', '1', ' ', 't', 'n', 'u', 'x', '\u0001', '\n', 'N', 'I', '😀'];

/** The text with one character deleted, inserted, replaced, or everything after a point cut. */
function broken(next: Next, text: string): string {
  const at = next(0, text.length);
  switch (next(0, 3)) {
    case 0:
      return text.slice(0, at) + text.slice(at + 1);
    case 1:
      return text.slice(0, at) + pick(next, BREAKERS) + text.slice(at);
    case 2:
      return text.slice(0, at) + pick(next, BREAKERS) + text.slice(at + 1);
    default:
      return text.slice(0, at);
  }
}

// ------------------------------------------------------------------------------------ the promises

describe('the fast decoder gives what the reference scanner gives', () => {
  test('on 20,000 generated JSON texts, value for value', () => {
    const next = seededRandom(20261122);
    for (let k = 0; k < 20_000; k++) assertSameAsReference(randomValue(next, 0), `valid #${k}`);
  });

  test('on 40,000 generated texts broken by one edit or cut short, error for error', () => {
    const next = seededRandom(1322);
    for (let k = 0; k < 40_000; k++) {
      let text = randomValue(next, 0);
      for (let edits = next(1, 2); edits > 0; edits--) text = broken(next, text);
      assertSameAsReference(text, `broken #${k}`);
    }
  });

  test('on 2,000 generated objects of 9 to 60 members with repeated keys, alone, nested and broken', () => {
    const next = seededRandom(4711);
    for (let k = 0; k < 2_000; k++) {
      const object = wideObject(next);
      assertSameAsReference(object, `wide #${k}`);
      assertSameAsReference(`[${object},{"k0":${object}}]`, `wide nested #${k}`);
      assertSameAsReference(broken(next, object), `wide broken #${k}`);
    }
  });

  test('on every number edge case alone, with a sign, and followed by each character that can end or extend it', () => {
    for (const edge of NUMBER_EDGES) {
      for (const text of [edge, `-${edge}`, `[${edge}]`, `{"a":${edge}}`]) assertSameAsReference(text, 'number');
      for (const after of ['.', 'e', 'E', 'e+', 'e-', '.5', 'e5', ' ', ',', 'x']) assertSameAsReference(edge + after, 'number');
    }
  });

  test('on the benchmark bodies, including their nesting and escapes', () => {
    for (const shape of decodeShapes()) {
      if (shape.encoding !== 'utf8') continue;
      assertSameAsReference(shape.bytes.toString('utf8'), shape.name);
    }
  });

  test('on nesting at, just under and just over the depth limit, in arrays and objects', () => {
    for (const depth of [DEPTH_MAX - 1, DEPTH_MAX, DEPTH_MAX + 1]) {
      assertSameAsReference('['.repeat(depth) + ']'.repeat(depth), `arrays ${depth}`);
      assertSameAsReference('{"a":'.repeat(depth) + '1' + '}'.repeat(depth), `objects ${depth}`);
      assertSameAsReference('['.repeat(depth) + '{}' + ']'.repeat(depth), `arrays around {} ${depth}`);
    }
  });
});

describe('decoded values are independent of earlier bodies', () => {
  test('a body decoded after a failed one gives the same value as on its own', () => {
    const body = Buffer.from('[[1, 2], [3, [4, 5]], {"a": [6]}]');
    const alone = tagged(decodeJson(body, DEPTH_MAX));
    assert.throws(() => decodeJson(Buffer.from('[[1, 2], [3, [4, x'), DEPTH_MAX), JsonSyntaxError);
    assert.equal(tagged(decodeJson(body, DEPTH_MAX)), alone);
  });
});
