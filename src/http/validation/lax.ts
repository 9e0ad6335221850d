// pydantic's lax ("python" mode) coercions, as FastAPI applies them to path/query text and to
// decoded JSON bodies, reproduced rule for rule from pydantic-core 2.46.4 so that the same input is
// accepted, yields the same value, or fails with the same error type and message.
//
// Sources (pydantic-core, now under pydantic/pydantic at pydantic-core/):
//   src/input/shared.rs      str_as_int, clean_int_str, strip_leading_zeros, strip_underscores,
//                            str_as_bool, int_as_bool, float_as_int
//   src/input/input_python.rs validate_int / validate_bool (python-mode lax order of attempts)
//   jiter number_decoder.rs  NumberInt::try_from / IntParse::parse (the strict integer grammar and
//                            the 4300-character bound)
//   src/errors/types.rs      message texts
// Every rule below was also checked against pydantic-core 2.46.4 itself.
import { PyFloat, type JsonValue } from '../json/json-value.js';

// ---------------------------------------------------------------- messages

/** Message texts of the error types without context, exactly as pydantic words them. */
export const MESSAGES = {
  missing: 'Field required',
  model_attributes_type: 'Input should be a valid dictionary or object to extract fields from',
  string_type: 'Input should be a valid string',
  string_unicode: 'Input should be a valid string, unable to parse raw data as a unicode string',
  int_parsing: 'Input should be a valid integer, unable to parse string as an integer',
  int_parsing_size: 'Unable to parse input string as an integer, exceeded maximum size',
  bool_type: 'Input should be a valid boolean',
  bool_parsing: 'Input should be a valid boolean, unable to interpret input',
} as const;

export type MessageType = keyof typeof MESSAGES;

/** A constraint's limit: bounds of integer inputs are integers here (schema.ts allows no other). */
export type ConstraintValue = number | bigint;

export type ConstraintKind = 'greater_than' | 'greater_than_equal' | 'less_than_equal';

/** The message of a numeric constraint error, by its pydantic type; integers print in full. */
export function constraintMessage(kind: ConstraintKind, limit: ConstraintValue): string {
  switch (kind) {
    case 'greater_than':
      return `Input should be greater than ${limit}`;
    case 'greater_than_equal':
      return `Input should be greater than or equal to ${limit}`;
    case 'less_than_equal':
      return `Input should be less than or equal to ${limit}`;
  }
}

// ---------------------------------------------------------------- shared helpers

/**
 * Whether the text holds an unpaired UTF-16 surrogate. Python can hold such a str (json.loads of
 * "\ud800" makes one) but pydantic-core must turn it into a Rust &str first (py_string_str), which
 * fails with string_unicode before any parsing rule applies.
 */
function hasLoneSurrogate(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    if (c >= 0xdc00) return true; // a low surrogate with no high one before it
    const next = text.charCodeAt(i + 1); // NaN past the end
    if (!(next >= 0xdc00 && next <= 0xdfff)) return true;
    i++;
  }
  return false;
}

/**
 * Rust's `char::is_whitespace` (the Unicode White_Space property), which `str::trim` uses.
 * It differs from JavaScript's `trim`: U+0085 is whitespace here, U+FEFF is not.
 */
function isRustWhitespace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0x85) return false;
  return (
    c === 0x85 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000
  );
}

function rustTrim(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isRustWhitespace(text.charCodeAt(start))) start++;
  while (end > start && isRustWhitespace(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

// ---------------------------------------------------------------- integers from text

/** Why pydantic rejects a text as an integer. */
export type IntErrorType = 'int_parsing' | 'int_parsing_size' | 'string_unicode';

/**
 * The outcome of reading an int from text:
 * - `int_parsing`: not an integer by the rules below;
 * - `int_parsing_size`: the text starts with an integer whose sign and digits exceed 4300
 *   characters (jiter's bound, after CPython's int-from-str limit);
 * - `string_unicode`: the text holds an unpaired surrogate (unreachable through an HTTP path or
 *   query if the URL decoder, like Python's `unquote`, replaces invalid UTF-8 with U+FFFD).
 */
export type IntOutcome =
  | { readonly ok: true; readonly value: bigint }
  | { readonly ok: false; readonly type: IntErrorType };

/** jiter's bound on an integer's length, sign included (IntParse::parse: `new_index - start > 4300`). */
const MAX_INT_CHARS = 4300;
/** Up to 15 decimal digits always make a safe integer (2^53 - 1 has 16). */
const SAFE_DIGITS = 15;

/**
 * jiter's `NumberInt::try_from(bytes)`: the whole text must be a JSON integer, `-?(0|[1-9][0-9]*)`:
 * no '+', no leading zero, no space, nothing after the digits. A run of sign and digits longer than
 * 4300 is int_parsing_size even when something follows it.
 */
function parseStrictInt(s: string): number | bigint | 'int_parsing' | 'int_parsing_size' {
  const n = s.length;
  const negative = n > 0 && s.charCodeAt(0) === 0x2d;
  const first = negative ? 1 : 0;
  if (first >= n) return 'int_parsing';
  const c0 = s.charCodeAt(first);
  // A zero is a whole integer only on its own: "0" followed by a digit, '.', 'e' or anything else
  // fails.
  if (c0 === 0x30) return first + 1 === n ? 0 : 'int_parsing';
  if (c0 < 0x31 || c0 > 0x39) return 'int_parsing';
  let end = first + 1;
  while (end < n) {
    const c = s.charCodeAt(end);
    if (c < 0x30 || c > 0x39) break;
    end++;
  }
  // The length check runs while the digits are read, before jiter looks at what follows them.
  if (end > MAX_INT_CHARS) return 'int_parsing_size';
  if (end !== n) return 'int_parsing';
  if (end - first <= SAFE_DIGITS) {
    let value = 0;
    for (let i = first; i < end; i++) value = value * 10 + (s.charCodeAt(i) - 0x30);
    return negative ? -value : value;
  }
  const big = BigInt(first === 0 ? s : s.slice(first));
  return negative ? -big : big;
}

/**
 * pydantic-core's `strip_leading_zeros`: drops leading zeros, and underscores among them, keeping
 * the zero before a '.', or the last character when all are zeros/underscores. It hands back the
 * rest from the first 1-9 *or '-'* (so "0-1" becomes "-1", which then parses: a quirk kept on
 * purpose). Undefined when the text starts with anything but a digit or '-' (so "_1", ".5", ""
 * fail).
 */
function stripLeadingZeros(s: string): string | undefined {
  const c0 = s.charCodeAt(0);
  if (c0 !== 0x30) return (c0 >= 0x31 && c0 <= 0x39) || c0 === 0x2d ? s : undefined;
  for (let i = 1; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x30 || c === 0x5f) continue;
    if ((c >= 0x31 && c <= 0x39) || c === 0x2d) return s.slice(i);
    if (c === 0x2e) return s.slice(i - 1);
    return undefined;
  }
  return s.slice(-1);
}

/**
 * pydantic-core's `clean_int_str`: the second chance after the strict parse failed. Undefined when
 * pydantic gives up without parsing again (including when cleaning changed nothing).
 */
function cleanIntText(raw: string): string | undefined {
  let s = rustTrim(raw);
  // One '+' may lead, but not "+-".
  if (s.charCodeAt(0) === 0x2b) {
    if (s.charCodeAt(1) === 0x2d) return undefined;
    s = s.slice(1);
  }
  // The sign is set aside so that zeros after it are stripped too ("-01" → -1), and put back at the
  // end.
  let negative = false;
  if (s.charCodeAt(0) === 0x2d) {
    const next = s.charCodeAt(1);
    if (next === 0x2d || next === 0x2b) return undefined;
    negative = true;
    s = s.slice(1);
  }
  const stripped = stripLeadingZeros(s);
  if (stripped === undefined) return undefined;
  s = stripped;
  // An all-zero fraction goes ("1.00" → "1"); an empty one ("1.") or any other stays and fails
  // later.
  const dot = s.indexOf('.');
  if (dot >= 0 && dot < s.length - 1) {
    let allZeros = true;
    for (let i = dot + 1; i < s.length; i++) {
      if (s.charCodeAt(i) !== 0x30) {
        allZeros = false;
        break;
      }
    }
    if (allZeros) s = s.slice(0, dot);
  }
  // strip_underscores: single underscores between characters, as Python's int() takes them; a
  // leading, trailing or doubled one leaves the text as it is (and so it fails).
  if (s.includes('_') && !s.startsWith('_') && !s.endsWith('_') && !s.includes('__')) {
    const joined = s.replaceAll('_', '');
    return negative ? `-${joined}` : joined;
  }
  // Nothing removed at all: the strict parse already said no.
  if (s.length === raw.length) return undefined;
  return negative ? `-${s}` : s;
}

/** str_as_int: the strict parse, then one parse of the cleaned text (whose every failure is int_parsing). */
function parseIntText(text: string): number | bigint | IntErrorType {
  const strict = parseStrictInt(text);
  if (typeof strict !== 'string') return strict;
  if (strict === 'int_parsing') {
    const cleaned = cleanIntText(text);
    if (cleaned !== undefined) {
      const second = parseStrictInt(cleaned);
      if (typeof second !== 'string') return second;
    }
  }
  // A text that fails may fail earlier, on its way into Rust (a success never holds a surrogate).
  return hasLoneSurrogate(text) ? 'string_unicode' : strict;
}

/** The value of 1–15 plain ASCII digits (leading zeros allowed), or -1 when the text is anything else. */
function plainDigits(text: string): number {
  const n = text.length;
  if (n === 0 || n > SAFE_DIGITS) return -1;
  let value = 0;
  for (let i = 0; i < n; i++) {
    const d = text.charCodeAt(i) - 0x30;
    if (d < 0 || d > 9) return -1;
    value = value * 10 + d;
  }
  return value;
}

const INT_FAILURES: Readonly<Record<IntErrorType, IntOutcome>> = {
  int_parsing: Object.freeze({ ok: false, type: 'int_parsing' }),
  int_parsing_size: Object.freeze({ ok: false, type: 'int_parsing_size' }),
  string_unicode: Object.freeze({ ok: false, type: 'string_unicode' }),
};

/**
 * pydantic's lax int from a path/query string: the exact integer, or the error pydantic reports.
 * Accepted: optional surrounding Unicode whitespace, one optional sign ('+' or '-'), ASCII digits
 * with leading zeros and single underscores between digits, an optional all-zero fraction (".0").
 */
export function intFromText(text: string): IntOutcome {
  const plain = plainDigits(text);
  if (plain >= 0) return { ok: true, value: BigInt(plain) };
  const parsed = parseIntText(text);
  if (typeof parsed === 'string') return INT_FAILURES[parsed];
  return { ok: true, value: typeof parsed === 'bigint' ? parsed : BigInt(parsed) };
}

/**
 * The path parameter's read: the same rules in one pass, the value as a number when the text is a
 * plain digit run (the common case) and otherwise as the parse gives it, or the error type.
 */
export function readIntText(text: string): number | bigint | IntErrorType {
  const plain = plainDigits(text);
  return plain >= 0 ? plain : parseIntText(text);
}

// ---------------------------------------------------------------- booleans from JSON

export type BoolErrorType = 'bool_parsing' | 'bool_type';
/**
 * The outcome of a lax bool: `bool_parsing` for a string or number of the right kind but not a
 * boolean value, `bool_type` for everything else. (pydantic refuses a string holding an unpaired
 * surrogate with `string_unicode`; by deviation D7 such a string is an ordinary string here.)
 */
export type BoolOutcome =
  | { readonly ok: true; readonly value: boolean }
  | { readonly ok: false; readonly type: BoolErrorType };

const TRUE: BoolOutcome = Object.freeze({ ok: true, value: true });
const FALSE: BoolOutcome = Object.freeze({ ok: true, value: false });
const BOOL_PARSING: BoolOutcome = Object.freeze({ ok: false, type: 'bool_parsing' });
const BOOL_TYPE: BoolOutcome = Object.freeze({ ok: false, type: 'bool_type' });

const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;
/** `i64::MAX as f64` (= 2^63); float_as_int takes floats strictly between -2^63 and this. */
const I64_BOUND_F64 = 2 ** 63;

/** str_as_bool: exact words, ASCII case-insensitive; no trimming. */
/**
 * The strings str_as_bool reads, by the value they give (letters in any ASCII case): what the
 * documents list as a boolean field's other accepted values. strAsBool below compares them one by
 * one rather than looking them up; test/http/lax.test.ts checks that the two agree.
 */
export const LAX_BOOL_WORDS = {
  true: ['1', 't', 'y', 'yes', 'on', 'true'],
  false: ['0', 'f', 'n', 'no', 'off', 'false'],
} as const;

function strAsBool(s: string): BoolOutcome {
  switch (s.length) {
    case 1:
      // "0" and "1" only as themselves; f/n/t/y in either case.
      if (s === '0' || s === 'f' || s === 'F' || s === 'n' || s === 'N') return FALSE;
      if (s === '1' || s === 't' || s === 'T' || s === 'y' || s === 'Y') return TRUE;
      break;
    case 2:
    case 3:
    case 4:
    case 5: {
      const lower = asciiLower(s);
      if (lower === 'no' || lower === 'off' || lower === 'false') return FALSE;
      if (lower === 'on' || lower === 'yes' || lower === 'true') return TRUE;
      break;
    }
  }
  // D7: a string with a lone surrogate is a string like any other here (pydantic: string_unicode).
  return BOOL_PARSING;
}

/** Lower-cases A–Z only, as Rust's eq_ignore_ascii_case compares (so 'İ' or 'ſ' never match). */
function asciiLower(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    out += String.fromCharCode(c >= 0x41 && c <= 0x5a ? c | 0x20 : c);
  }
  return out;
}

/** float_as_int then EitherInt::as_bool: a whole float inside i64 is 0/1 or bool_parsing; others bool_type. */
function floatAsBool(x: number): BoolOutcome {
  if (!Number.isFinite(x) || x % 1 !== 0) return BOOL_TYPE; // finite_number / int_from_float fall through
  if (!(x > -I64_BOUND_F64 && x < I64_BOUND_F64)) return BOOL_TYPE; // int_parsing_size falls through
  return x === 0 ? FALSE : x === 1 ? TRUE : BOOL_PARSING; // -0.0 is 0
}

/**
 * pydantic's lax bool (python mode, as FastAPI validates a json.loads'ed body): a bool as itself; a
 * string by str_as_bool; an int inside i64 by int_as_bool (0/1, else bool_parsing); a larger int,
 * which extract_i64 refuses, goes the float way and ends as bool_type; a float by float_as_int;
 * null, arrays and objects bool_type.
 */
export function boolFromJson(value: JsonValue): BoolOutcome {
  switch (typeof value) {
    case 'boolean':
      return value ? TRUE : FALSE;
    case 'string':
      return strAsBool(value);
    case 'number':
      // A JSON int in this project's data model; a non-whole number can only be a float.
      if (!Number.isInteger(value)) return floatAsBool(value);
      // Kept total for integers a bigint should have carried: beyond i64 extract_i64 refuses them.
      if (value < -I64_BOUND_F64 || value >= I64_BOUND_F64) return BOOL_TYPE;
      return value === 0 ? FALSE : value === 1 ? TRUE : BOOL_PARSING;
    case 'bigint':
      if (value < I64_MIN || value > I64_MAX) return BOOL_TYPE;
      return value === 0n ? FALSE : value === 1n ? TRUE : BOOL_PARSING;
    default:
      return value instanceof PyFloat ? floatAsBool(value.value) : BOOL_TYPE;
  }
}
