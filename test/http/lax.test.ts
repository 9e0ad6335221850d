// The lax coercions against the behaviour of pydantic-core 2.46.4. Each test names one rule; the
// comment says which pydantic-core (or jiter) function the rule comes from. Every expectation here
// was also checked against pydantic-core 2.46.4 itself (TypeAdapter(int|bool).validate_python).
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { JsonObject, PyFloat, type JsonValue } from '../../src/http/json/json-value.js';
import { LAX_BOOL_DESCRIPTION } from '../../src/http/validation/schema.js';
import {
  LAX_BOOL_WORDS,
  MESSAGES,
  boolFromJson,
  constraintMessage,
  intFromText,
  readIntText,
  type BoolOutcome,
  type IntOutcome,
} from '../../src/http/validation/lax.js';

// ---------------------------------------------------------------- helpers

/** The outcome as a comparable value: the integer, or the error type. */
function int(text: string): bigint | string {
  const outcome: IntOutcome = intFromText(text);
  return outcome.ok ? outcome.value : outcome.type;
}

function assertInts(cases: readonly (readonly [string, bigint | string])[]): void {
  for (const [text, expected] of cases) {
    assert.equal(
      int(text),
      expected,
      `intFromText(${JSON.stringify(text.length > 40 ? `${text.slice(0, 20)}…(${text.length})` : text)})`,
    );
    // The path parameter's one-pass read must agree: the same integer (as number or bigint), or the
    // same error.
    const read = readIntText(text);
    assert.equal(
      typeof read === 'string' ? read : BigInt(read),
      expected,
      `readIntText(${JSON.stringify(text.slice(0, 40))})`,
    );
  }
}

function bool(value: JsonValue): boolean | string {
  const outcome: BoolOutcome = boolFromJson(value);
  return outcome.ok ? outcome.value : outcome.type;
}

function assertBools(cases: readonly (readonly [JsonValue, boolean | string])[]): void {
  for (const [value, expected] of cases) {
    assert.equal(bool(value), expected, `boolFromJson(${describe(value)})`);
  }
}

function describe(value: JsonValue): string {
  if (value instanceof PyFloat) return `PyFloat(${value.value})`;
  if (typeof value === 'bigint') return `${value}n`;
  if (value instanceof JsonObject) return 'JsonObject';
  return JSON.stringify(value);
}

const P = 'int_parsing';
const SIZE = 'int_parsing_size';

// ---------------------------------------------------------------- intFromText

test('int: plain ASCII digits are the integer (jiter NumberInt::try_from)', () => {
  assertInts([
    ['1', 1n],
    ['42', 42n],
    ['0', 0n],
    ['123456789012345', 123456789012345n],
  ]);
});

test('int: leading zeros are dropped (shared.rs strip_leading_zeros)', () => {
  assertInts([
    ['01', 1n],
    ['0001', 1n],
    ['00', 0n],
    ['-01', -1n],
    ['+007', 7n],
  ]);
});

test('int: surrounding Unicode White_Space is trimmed (clean_int_str uses Rust str::trim)', () => {
  assertInts([
    [' 1', 1n],
    ['1 ', 1n],
    ['\t1', 1n],
    ['\n1\r', 1n],
    ['\v1\f', 1n],
    ['\u00851', 1n], // NEL: White_Space in Rust, not trimmed by JavaScript's trim
    ['\u00a01\u3000', 1n],
    ['\u20281\u2029', 1n],
    ['\u2000\u200a1\u202f\u205f', 1n],
    ['\u16801', 1n],
    [' -1 ', -1n],
  ]);
});

test('int: characters outside White_Space are not trimmed, even those JavaScript trims (U+FEFF)', () => {
  assertInts([
    ['\u200b1', P], // zero-width space
    ['\ufeff1', P], // BOM: JavaScript's trim would remove it, Rust's does not
    ['\u180e1', P], // Mongolian vowel separator, no longer White_Space
    ['\u001c1', P], // Python's str.strip removes U+001C–U+001F, Rust does not
    ['1\u001f', P],
  ]);
});

test('int: empty text or whitespace alone is int_parsing', () => {
  assertInts([
    ['', P],
    [' ', P],
    ['\t\n', P],
  ]);
});

test("int: one leading sign, '-' or '+' (clean_int_str)", () => {
  assertInts([
    ['-1', -1n],
    ['+1', 1n],
    ['-0', 0n],
    ['+0', 0n],
    ['-00', 0n],
  ]);
  // -0 is 0: never a negative zero number.
  assert.ok(Object.is(readIntText('-0'), 0) || readIntText('-0') === 0n);
  assert.ok(Object.is(readIntText('-0.0'), 0) || readIntText('-0.0') === 0n);
});

test('int: doubled, mixed, detached or lone signs fail (clean_int_str)', () => {
  assertInts([
    ['--1', P],
    ['+-1', P],
    ['-+1', P],
    ['++1', P],
    ['- 1', P],
    ['+ 1', P],
    ['-', P],
    ['+', P],
    ['1-', P],
  ]);
});

test('int: an all-zero fraction is dropped (clean_int_str, after strip_leading_zeros)', () => {
  assertInts([
    ['1.0', 1n],
    ['1.00000', 1n],
    ['0.0', 0n],
    ['5.0', 5n],
    ['-0.0', 0n],
    ['00.0', 0n],
    ['-3.000', -3n],
    [' 7.0 ', 7n],
    ['1_000.0', 1000n],
  ]);
});

test('int: zeros before a fraction go only when the fraction is all zeros (strip_leading_zeros keeps the zero before the dot)', () => {
  assertInts([
    ['0.5', P],
    ['00.5', P],
    ['09', 9n],
    ['0009', 9n],
    ['0_9', 9n],
  ]);
});

test('int: any other fraction fails, including an empty one (clean_int_str)', () => {
  assertInts([
    ['1.5', P],
    ['2.50', P],
    ['1.', P],
    ['0.', P],
    ['1.0000000000000000001', P],
    ['.0', P],
    ['-.0', P],
    ['1.0.0', P],
    ['1.0_0', P], // the fraction must be zeros only; underscores are not stripped there first
    ['1._0', P],
  ]);
});

test('int: single underscores between digits are removed (shared.rs strip_underscores)', () => {
  assertInts([
    ['1_0', 10n],
    ['1_000_000', 1000000n],
    ['-1_0', -10n],
    ['+1_0', 10n],
    ['0_1', 1n],
    ['0_0', 0n],
  ]);
});

test('int: leading, trailing or doubled underscores fail (strip_underscores, as Python int())', () => {
  assertInts([
    ['_1', P],
    ['1_', P],
    ['1__0', P],
    ['0_', P],
    ['_0', P],
    ['-_1', P],
    ['1_.0', P],
  ]);
});

test('int: underscores among leading zeros go with the zeros, doubled or not (strip_leading_zeros)', () => {
  assertInts([
    ['0__1', 1n],
    ['0__0', 0n],
    ['00_00_7', 7n],
  ]);
});

test("int: a '-' right after leading zeros is taken as the sign (strip_leading_zeros quirk)", () => {
  // strip_leading_zeros hands back the rest from a '-' as from a digit, and the strict parse then
  // reads it as a sign. A second sign in front makes "--1", which fails.
  assertInts([
    ['0-1', -1n],
    ['00-5', -5n],
    ['+0-1', -1n],
    ['0_-1', -1n],
    ['0-1_0', -10n],
    ['-0-1', P],
    ['0--1', P],
  ]);
});

test('int: no exponent, radix prefix or non-ASCII digit (jiter accepts ASCII 0-9 only)', () => {
  assertInts([
    ['1e3', P],
    ['1E3', P],
    ['0e0', P],
    ['0x10', P],
    ['0o7', P],
    ['0b1', P],
    ['\u0661', P], // Arabic-Indic one
    ['\uff11', P], // fullwidth one
  ]);
});

test('int: words and special floats fail', () => {
  assertInts([
    ['abc', P],
    ['true', P],
    ['null', P],
    ['NaN', P],
    ['inf', P],
    ['Infinity', P],
    ['-Infinity', P],
  ]);
});

test('int: anything else around or inside the digits fails', () => {
  assertInts([
    ['1,0', P],
    ['1;x=1', P],
    ['1\u0000', P],
    ['1 1', P],
    ['1x', P],
    ['1\ud83d\ude00', P], // a well-formed astral character is just another non-digit
  ]);
});

test('int: values beyond 64 bits are exact (jiter NumberInt::BigInt)', () => {
  assertInts([
    ['99999999999999999999999', 99999999999999999999999n],
    [' 99999999999999999999999', 99999999999999999999999n],
    ['9007199254740991', 9007199254740991n],
    ['9007199254740993', 9007199254740993n],
    ['9223372036854775807', 9223372036854775807n],
    ['9223372036854775808', 9223372036854775808n],
    ['-9223372036854775809', -9223372036854775809n],
    ['1000000000000000000', 1000000000000000000n],
    ['100000000000000000000.000', 100000000000000000000n],
  ]);
});

test('int: int_parsing_size when sign and digits pass 4300 characters (jiter IntParse::parse)', () => {
  const digits = (n: number): string => '1'.repeat(n);
  assertInts([
    [digits(4300), BigInt(digits(4300))],
    [digits(4301), SIZE],
    [`-${digits(4299)}`, -BigInt(digits(4299))],
    [`-${digits(4300)}`, SIZE], // the sign counts toward the 4300
    // The bound is checked while the digits are read, before what follows them is looked at.
    [`${digits(4301)}x`, SIZE],
    [`${digits(4301)}.0`, SIZE],
    [`${digits(4300)}x`, P],
    [`${digits(4300)}.0`, BigInt(digits(4300))],
  ]);
});

test('int: the size bound only reports on the untouched text; a cleaned long number is int_parsing (str_as_int)', () => {
  const digits = (n: number): string => '1'.repeat(n);
  assertInts([
    [` ${digits(4301)}`, P],
    [`0${digits(4301)}`, P],
    [`+${digits(4301)}`, P],
    [` ${digits(4300)}`, BigInt(digits(4300))],
    [`0${digits(4300)}`, BigInt(digits(4300))],
    [`${'0'.repeat(6000)}1`, 1n],
  ]);
});

test('int: an unpaired surrogate is string_unicode (py_string_str fails before parsing)', () => {
  assertInts([
    ['\ud800', 'string_unicode'],
    ['1\ud800', 'string_unicode'],
    ['\udc001', 'string_unicode'],
    [`${'1'.repeat(5000)}\ud800`, 'string_unicode'],
    // Each edge of the two halves' ranges, alone, doubled and out of order.
    ['\udfff', 'string_unicode'],
    ['\udc00\udc00', 'string_unicode'],
    ['\ud800a', 'string_unicode'],
    ['\ud800\ue000', 'string_unicode'],
    ['\udc00\ud800', 'string_unicode'],
  ]);
});

test('int: a well-formed surrogate pair is a character like any other, so int_parsing', () => {
  assertInts([
    ['\ud800\udc00', P],
    ['\udbff\udfff', P],
    ['1\ud83d\ude00', P],
  ]);
});

test('int: intFromText returns a bigint; readIntText a number for plain digits, else what the parse gives', () => {
  assert.deepEqual(intFromText('42'), { ok: true, value: 42n });
  assert.equal(readIntText('42'), 42);
  assert.equal(BigInt(readIntText(' -9007199254740991 ') as number | bigint), -9007199254740991n);
  assert.equal(BigInt(readIntText('9007199254740992') as number | bigint), 9007199254740992n); // exact past 2^53
  assert.equal(readIntText('abc'), 'int_parsing');
  assert.deepEqual(intFromText('abc'), { ok: false, type: 'int_parsing' });
});

// ---------------------------------------------------------------- boolFromJson

test('bool: the values the documents list are read as they say, in any letter case, and their near misses are refused', () => {
  for (const value of [true, false] as const) {
    for (const word of LAX_BOOL_WORDS[value ? 'true' : 'false']) {
      assertBools([
        [word, value],
        [word.toUpperCase(), value],
        [word.charAt(0).toUpperCase() + word.slice(1), value],
      ]);
      assertBools([
        [`${word}s`, 'bool_parsing'],
        [` ${word}`, 'bool_parsing'],
      ]);
      assert.ok(LAX_BOOL_DESCRIPTION.includes(`"${word}"`), `the description names "${word}"`);
    }
  }
  // The numbers the description names, as JSON integers and floats.
  assertBools([
    [1, true],
    [0, false],
    [new PyFloat(1), true],
    [new PyFloat(0), false],
    [2, 'bool_parsing'],
  ]);
  assert.match(LAX_BOOL_DESCRIPTION, /the numbers 1 and 0 \(1\.0 and 0\.0 too\)/);
});

test('bool: booleans are themselves (validate_bool, PyBool)', () => {
  assertBools([
    [true, true],
    [false, false],
  ]);
});

test('bool: true/yes/on/y/t/1 are true in any ASCII letter case (shared.rs str_as_bool)', () => {
  assertBools([
    ['true', true],
    ['TRUE', true],
    ['True', true],
    ['tRuE', true],
    ['yes', true],
    ['YES', true],
    ['on', true],
    ['On', true],
    ['y', true],
    ['Y', true],
    ['t', true],
    ['T', true],
    ['1', true],
  ]);
});

test('bool: false/no/off/n/f/0 are false in any ASCII letter case (str_as_bool)', () => {
  assertBools([
    ['false', false],
    ['FALSE', false],
    ['False', false],
    ['no', false],
    ['NO', false],
    ['off', false],
    ['OfF', false],
    ['n', false],
    ['N', false],
    ['f', false],
    ['F', false],
    ['0', false],
  ]);
});

test('bool: other strings are bool_parsing: no trimming, no numbers, no Unicode case folding (str_as_bool)', () => {
  assertBools([
    [' true', 'bool_parsing'],
    ['true ', 'bool_parsing'],
    ['', 'bool_parsing'],
    ['maybe', 'bool_parsing'],
    ['01', 'bool_parsing'],
    ['00', 'bool_parsing'],
    ['+1', 'bool_parsing'],
    ['1.0', 'bool_parsing'],
    ['2', 'bool_parsing'],
    ['\u0130', 'bool_parsing'], // İ
    ['ye\u017f', 'bool_parsing'], // ſ upper-cases to S, but eq_ignore_ascii_case is ASCII only
    ['tru', 'bool_parsing'],
  ]);
});

test('bool: a string with an unpaired surrogate is an ordinary non-boolean string, bool_parsing (deviation D7)', () => {
  assertBools([
    ['\ud800', 'bool_parsing'],
    ['true\ud800', 'bool_parsing'],
    ['x\udc00', 'bool_parsing'],
    ['yes\ud83d\ude00', 'bool_parsing'], // paired: a valid string, just not a boolean word
  ]);
});

test('bool: ints 0 and 1 are booleans, other ints inside i64 are bool_parsing (int_as_bool)', () => {
  assertBools([
    [1, true],
    [0, false],
    [2, 'bool_parsing'],
    [-1, 'bool_parsing'],
    [9007199254740991, 'bool_parsing'],
    [9007199254740993n, 'bool_parsing'],
    [9223372036854775807n, 'bool_parsing'],
    [-9223372036854775808n, 'bool_parsing'],
  ]);
});

test('bool: a number is read as the JSON int or float it stands for (the function is total, whatever its caller)', () => {
  // The decoder gives safe integers as numbers and floats as PyFloat; a plain number of any kind
  // still answers as pydantic answers its value.
  assertBools([
    [0.5, 'bool_type'],
    [-(2 ** 63), 'bool_parsing'], // i64::MIN itself
    [2 ** 63, 'bool_type'],
    [-(2 ** 64), 'bool_type'],
    [0n, false],
    [1n, true],
    [2n, 'bool_parsing'],
  ]);
});

test('bool: ints beyond i64 are bool_type (extract_i64 refuses them; float_as_int says int_parsing_size)', () => {
  assertBools([
    [9223372036854775808n, 'bool_type'],
    [-9223372036854775809n, 'bool_type'],
    [10n ** 30n, 'bool_type'],
  ]);
});

test('bool: whole floats inside i64 are 0/1 or bool_parsing (float_as_int, then EitherInt::as_bool)', () => {
  assertBools([
    [new PyFloat(1), true],
    [new PyFloat(0), false],
    [new PyFloat(-0), false],
    [new PyFloat(2), 'bool_parsing'],
    [new PyFloat(-1), 'bool_parsing'],
    [new PyFloat(9.223372036854775e18), 'bool_parsing'], // the largest float below 2^63
  ]);
});

test('bool: non-whole, non-finite, and out-of-i64 floats are bool_type (float_as_int errors fall through)', () => {
  assertBools([
    [new PyFloat(0.5), 'bool_type'],
    [new PyFloat(1e-300), 'bool_type'],
    [new PyFloat(1.0000000000000002), 'bool_type'],
    [new PyFloat(Infinity), 'bool_type'],
    [new PyFloat(-Infinity), 'bool_type'],
    [new PyFloat(NaN), 'bool_type'],
    [new PyFloat(2 ** 63), 'bool_type'], // i64::MAX as f64 is excluded
    [new PyFloat(-(2 ** 63)), 'bool_type'], // so is i64::MIN as f64
    [new PyFloat(1e19), 'bool_type'],
  ]);
});

test('bool: null, arrays and objects are bool_type (validate_bool)', () => {
  assertBools([
    [null, 'bool_type'],
    [[], 'bool_type'],
    [[true], 'bool_type'],
    [new JsonObject([]), 'bool_type'],
    [JsonObject.fromEntries([['a', 1]]), 'bool_type'],
  ]);
});

// ---------------------------------------------------------------- messages

test("messages: MESSAGES are pydantic's texts (errors/types.rs)", () => {
  assert.equal(
    MESSAGES.int_parsing,
    'Input should be a valid integer, unable to parse string as an integer',
  );
  assert.equal(
    MESSAGES.int_parsing_size,
    'Unable to parse input string as an integer, exceeded maximum size',
  );
  assert.equal(MESSAGES.bool_parsing, 'Input should be a valid boolean, unable to interpret input');
  assert.equal(MESSAGES.bool_type, 'Input should be a valid boolean');
  assert.equal(MESSAGES.string_type, 'Input should be a valid string');
  assert.equal(
    MESSAGES.string_unicode,
    'Input should be a valid string, unable to parse raw data as a unicode string',
  );
  assert.equal(MESSAGES.missing, 'Field required');
  assert.equal(
    MESSAGES.model_attributes_type,
    'Input should be a valid dictionary or object to extract fields from',
  );
  // Every error type the two functions return has its message.
  for (const type of [
    'int_parsing',
    'int_parsing_size',
    'string_unicode',
    'bool_parsing',
    'bool_type',
  ] as const) {
    assert.equal(typeof MESSAGES[type], 'string');
  }
});

test('messages: numeric constraints print integers in full (ErrorType::GreaterThan etc.)', () => {
  assert.equal(constraintMessage('greater_than', 0), 'Input should be greater than 0');
  assert.equal(
    constraintMessage('greater_than_equal', -5),
    'Input should be greater than or equal to -5',
  );
  assert.equal(
    constraintMessage('less_than_equal', 9007199254740991),
    'Input should be less than or equal to 9007199254740991',
  );
  assert.equal(
    constraintMessage('less_than_equal', 2n ** 70n),
    'Input should be less than or equal to 1180591620717411303424',
  );
});
