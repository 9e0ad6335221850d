// The fast decoder against the reference port of CPython's scanner
// (test/support/json-decode-reference.ts), on inputs generated from fixed seeds: JSON with every
// kind of token (escapes and surrogates, integers around 2^53 and past 15 digits, floats the fast
// path can and cannot round, duplicate keys, nesting, whitespace), then the same texts broken by
// one edit or cut short. For every input both give the same value (same types, same key order, same
// float bits) or the same error at the same place.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeShapes } from '../../bench/decode-shapes.js';
import { BodyEncodingError, decodeJson, JsonSyntaxError } from '../../src/http/json/json-decode.js';
import { PyFloat, type JsonValue } from '../../src/http/json/json-value.js';
import {
  codePointIndexes,
  decodeSurrogatePass,
  detectEncoding,
  encodeSurrogatePass,
  textOf,
} from '../support/json-bytes-reference.js';
import { ReferenceSyntaxError, referenceParse } from '../support/json-decode-reference.js';
import { seededRandom } from '../support/load.js';

const DEPTH_MAX = 512;

/** A value written out with its types: Map order, int versus float, the bits of a float (-0 included). */
function tagged(value: JsonValue): string {
  if (value === null || typeof value === 'boolean') return String(value);
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') return `int:${value}`;
  if (typeof value === 'bigint') return `big:${value}`;
  if (value instanceof PyFloat)
    return `float:${Object.is(value.value, -0) ? '-0' : String(value.value)}`;
  if (Array.isArray(value)) return `[${value.map(tagged).join(',')}]`;
  return `{${[...value].map(([k, v]) => `${JSON.stringify(k)}:${tagged(v)}`).join(',')}}`;
}

/** What decoding gave: the tagged value, or the error with Python's position in code points. */
function outcome(decode: () => JsonValue, toCodePoints: (unit: number) => number): string {
  try {
    return `ok ${tagged(decode())}`;
  } catch (error) {
    if (error instanceof JsonSyntaxError) return `syntax ${error.msg} @${error.pos}`;
    if (error instanceof ReferenceSyntaxError)
      return `syntax ${error.msg} @${toCodePoints(error.unit)}`;
    if (error instanceof BodyEncodingError) return 'undecodable';
    throw error;
  }
}

function assertSameAsReference(generated: string, what: string): void {
  const bytes = Buffer.from(generated, 'utf8');
  // An edit may split a surrogate pair, which UTF-8 cannot carry: compare on the text the bytes
  // hold. That text is well-formed UTF-16, so a code point count is Array.from's length.
  const text = bytes.toString('utf8');
  const toCodePoints = (unit: number): number => Array.from(text.slice(0, unit)).length;
  const fast = outcome(() => decodeJson(bytes, DEPTH_MAX), toCodePoints);
  const reference = outcome(() => referenceParse(text, DEPTH_MAX), toCodePoints);
  if (fast !== reference)
    assert.fail(
      `${what}: ${JSON.stringify(text.slice(0, 300))}\n  fast:      ${fast.slice(0, 300)}\n  reference: ${reference.slice(0, 300)}`,
    );
}

/** Bytes through both: json.loads' detection and codecs (the byte oracle), then the reference scanner. */
function assertBytesSameAsReference(bytes: Uint8Array, what: string): void {
  const fast = outcome(
    () => decodeJson(bytes, DEPTH_MAX),
    () => -1,
  );
  const codePoints = decodeSurrogatePass(bytes, detectEncoding(bytes));
  let reference = 'undecodable';
  if (codePoints !== undefined) {
    const indexes = codePointIndexes(codePoints);
    reference = outcome(
      () => referenceParse(textOf(codePoints), DEPTH_MAX),
      (unit) => indexes[unit] ?? -1,
    );
  }
  if (fast !== reference)
    assert.fail(
      `${what}: ${Buffer.from(bytes).toString('hex').slice(0, 200)}\n  fast:      ${fast.slice(0, 300)}\n  reference: ${reference.slice(0, 300)}`,
    );
}

// ------------------------------------------------------------------------------------ generation

type Next = (min: number, max: number) => number;

function pick<T>(next: Next, items: readonly T[]): T {
  return items[next(0, items.length - 1)] as T;
}

const STRING_PIECES = [
  'a',
  'title',
  ' ',
  'é',
  '😀',
  '\u2028',
  '\u007f',
  '\\"',
  '\\\\',
  '\\/',
  '\\b',
  '\\f',
  '\\n',
  '\\r',
  '\\t',
  '\\u0041',
  '\\u00e9',
  '\\u00E9',
  '\\ud83d\\ude00',
  '\\ud800',
  '\\udc00',
  '\\ud83d\\u0041',
  '\\ud83dx',
  '\\uD834\\uDD1E',
  '\\u0000',
  '\\u001f',
];

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

const NUMBER_EDGES = [
  '0',
  '-0',
  '9007199254740991',
  '-9007199254740991',
  '9007199254740992',
  '-9007199254740992',
  '9007199254740993',
  '999999999999999',
  '1000000000000000',
  '9999999999999999',
  '18446744073709551616',
  '0.0',
  '-0.0',
  '1.0',
  '0.1',
  '0.5',
  '1e22',
  '1e23',
  '1E-22',
  '1e-23',
  '9007199254740993.0',
  '9007199254740991.5',
  '5e-324',
  '2.2250738585072014e-308',
  '1.7976931348623157e308',
  '1e400',
  '-1e400',
  '1e-400',
  '123456789012345678e-5',
  '0.000001',
  '1.5e+2',
  '2E3',
  '0e0',
  '-0e-0',
  '1.00000000000000000000001',
  '3.141592653589793238462643383279',
];

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
  if (roll <= 6)
    return `[${ws()}${Array.from({ length: count }, () => randomValue(next, depth + 1) + ws()).join(`,${ws()}`)}]`;
  // Few distinct keys, so that objects repeat them.
  const keys = ['"a"', '"b"', '"1"', '"__proto__"', '"\\u0061"', '"é"', '""'];
  return `{${ws()}${Array.from({ length: count }, () => `${pick(next, keys)}${ws()}:${ws()}${randomValue(next, depth + 1)}${ws()}`).join(`,${ws()}`)}}`;
}

/** An object of more members than the decoder checks one by one, keys often repeated, some far apart. */
function wideObject(next: Next): string {
  const keyCount = next(9, 40);
  const members = Array.from(
    { length: next(9, 60) },
    () => `"k${next(0, keyCount)}":${randomValue(next, 5)}`,
  );
  return `{${members.join(',')}}`;
}

/** Lone surrogates, and the code points at the edges of each encoded length, to go in beside them. */
const INSERTED = [
  0xd800, 0xdbff, 0xdc00, 0xdfff, 0xd83d, 0xde00, 0x7f, 0x80, 0x7ff, 0x800, 0xd7ff, 0xe000, 0xfeff,
  0xffff, 0x10000, 0x10ffff,
];
const ENCODINGS = ['utf-8', 'utf-16-be', 'utf-16-le', 'utf-32-be', 'utf-32-le'] as const;
const BYTE_ORDER_MARKS: Readonly<Record<(typeof ENCODINGS)[number], readonly number[]>> = {
  'utf-8': [0xef, 0xbb, 0xbf],
  'utf-16-be': [0xfe, 0xff],
  'utf-16-le': [0xff, 0xfe],
  'utf-32-be': [0x00, 0x00, 0xfe, 0xff],
  'utf-32-le': [0xff, 0xfe, 0x00, 0x00],
};
const BYTE_BREAKERS = [
  0x00, 0x22, 0x5c, 0x7f, 0x80, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xed, 0xee, 0xef,
  0xf0, 0xf4, 0xf5, 0xfe, 0xff,
];

/** A generated body as bytes: lone surrogates sometimes added, in any encoding, with or without its mark, sometimes broken. */
function randomBody(next: Next): Uint8Array {
  const codePoints = Array.from(randomValue(next, 0), (c) => c.codePointAt(0) ?? 0);
  for (let k = next(0, 1) === 1 ? next(1, 4) : 0; k > 0; k--)
    codePoints.splice(next(0, codePoints.length), 0, pick(next, INSERTED));
  const encoding = pick(next, ENCODINGS);
  const bytes = [
    ...(next(0, 2) === 0 ? BYTE_ORDER_MARKS[encoding] : []),
    ...encodeSurrogatePass(codePoints, encoding),
  ];
  if (next(0, 2) === 0) {
    const at = next(0, bytes.length);
    switch (next(0, 3)) {
      case 0:
        bytes.splice(at, 1);
        break;
      case 1:
        bytes.splice(at, 0, pick(next, BYTE_BREAKERS));
        break;
      case 2:
        bytes.splice(at, 1, pick(next, BYTE_BREAKERS));
        break;
      default:
        bytes.length = at;
    }
  }
  return Uint8Array.from(bytes);
}

const BREAKERS = [
  '"',
  '\\',
  '{',
  '}',
  '[',
  ']',
  ',',
  ':',
  '.',
  'e',
  '-',
  '+',
  '0',
  '1',
  ' ',
  't',
  'n',
  'u',
  'x',
  '\u0001',
  '\n',
  'N',
  'I',
  '😀',
];

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

  test('on 1,000 generated objects of 9 to 60 members with repeated keys, alone, nested and broken', () => {
    const next = seededRandom(4711);
    for (let k = 0; k < 1_000; k++) {
      const object = wideObject(next);
      assertSameAsReference(object, `wide #${k}`);
      assertSameAsReference(`[${object},{"k0":${object}}]`, `wide nested #${k}`);
      assertSameAsReference(broken(next, object), `wide broken #${k}`);
    }
  });

  test('on 10,000 generated bodies in every encoding json.loads detects, with lone surrogates, marks and broken bytes', () => {
    const next = seededRandom(8088);
    for (let k = 0; k < 10_000; k++) assertBytesSameAsReference(randomBody(next), `body #${k}`);
  });

  test('on every two-byte sequence after a lead byte, and three- and four-byte ones at the edges of each range, in a string', () => {
    const edges = [0x00, 0x22, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xff];
    const quoted = (...inner: number[]): Uint8Array => Uint8Array.from([0x22, ...inner, 0x22]);
    for (let lead = 0x80; lead <= 0xff; lead++) {
      for (let second = 0; second <= 0xff; second++)
        assertBytesSameAsReference(quoted(lead, second), 'two bytes');
      for (const second of edges) {
        for (const third of edges) {
          assertBytesSameAsReference(quoted(lead, second, third), 'three bytes');
          assertBytesSameAsReference(quoted(lead, second, third, 0x80), 'four bytes');
          assertBytesSameAsReference(quoted(lead, second, 0x80, third), 'four bytes');
        }
      }
    }
  });

  test('on the shortest bodies: every one of one and two bytes, and the byte order marks alone or with one more byte', () => {
    for (let a = 0; a <= 0xff; a++) {
      assertBytesSameAsReference(Uint8Array.of(a), 'one byte');
      for (let b = 0; b <= 0xff; b++) assertBytesSameAsReference(Uint8Array.of(a, b), 'two bytes');
    }
    for (const mark of Object.values(BYTE_ORDER_MARKS)) {
      assertBytesSameAsReference(Uint8Array.from(mark), 'a mark alone');
      for (const more of [0x00, 0x31, 0x5b, 0xff]) {
        assertBytesSameAsReference(Uint8Array.from([...mark, more]), 'a mark and a byte');
        assertBytesSameAsReference(Uint8Array.from([...mark, more, 0x00]), 'a mark and two bytes');
        assertBytesSameAsReference(Uint8Array.from([...mark, 0x00, more]), 'a mark and two bytes');
      }
    }
  });

  test('on surrogates that touch, encoded one by one: two characters in UTF-8 and UTF-32, one in UTF-16, for positions after them', () => {
    for (const high of [0xd800, 0xdbff, 0xd83d, 0xdc00]) {
      for (const low of [0xdc00, 0xdfff, 0xde00, 0xd800]) {
        for (const encoding of ENCODINGS) {
          for (const codePoints of [
            [0x22, high, low, 0x22, 0x78],
            [0x5b, 0x22, high, low, high, low, 0x22, 0x5d, 0x5d],
            [0x22, high, low, 0x01],
          ]) {
            assertBytesSameAsReference(
              Uint8Array.from(encodeSurrogatePass(codePoints, encoding)),
              `${encoding} ${high.toString(16)} ${low.toString(16)}`,
            );
          }
        }
      }
    }
  });

  test('on every three- and four-byte prefix of zeros and digits, the patterns json.loads reads as UTF-16 or UTF-32', () => {
    const bytes = [0x00, 0x31, 0x20, 0xfe, 0xff];
    for (const a of bytes)
      for (const b of bytes)
        for (const c of bytes) {
          assertBytesSameAsReference(Uint8Array.of(a, b, c), 'three bytes');
          for (const d of bytes) {
            assertBytesSameAsReference(Uint8Array.of(a, b, c, d), 'four bytes');
            assertBytesSameAsReference(
              Uint8Array.of(a, b, c, d, 0x00, 0x00, 0x00, 0x31),
              'eight bytes',
            );
          }
        }
  });

  test('on every number edge case alone, with a sign, and followed by each character that can end or extend it', () => {
    for (const edge of NUMBER_EDGES) {
      for (const text of [edge, `-${edge}`, `[${edge}]`, `{"a":${edge}}`])
        assertSameAsReference(text, 'number');
      for (const after of ['.', 'e', 'E', 'e+', 'e-', '.5', 'e5', ' ', ',', 'x'])
        assertSameAsReference(edge + after, 'number');
    }
  });

  test('on the benchmark bodies at 64 KiB (their structure, not their size, is what they test), nesting and escapes included', () => {
    for (const shape of decodeShapes(64 * 1024)) {
      if (shape.encoding !== 'utf8') continue;
      assertSameAsReference(shape.bytes.toString('utf8'), shape.name);
    }
  });

  test('on nesting at, just under and just over the depth limit, in arrays and objects', () => {
    for (const depth of [DEPTH_MAX - 1, DEPTH_MAX, DEPTH_MAX + 1]) {
      assertSameAsReference('['.repeat(depth) + ']'.repeat(depth), `arrays ${depth}`);
      assertSameAsReference('{"a":'.repeat(depth) + '1' + '}'.repeat(depth), `objects ${depth}`);
      assertSameAsReference(
        '['.repeat(depth) + '{}' + ']'.repeat(depth),
        `arrays around {} ${depth}`,
      );
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
