// The decoder as it was first written, kept as the oracle of the differential tests: a direct,
// token-by-token port of CPython 3.11's scanner (Modules/_json.c) with no fast paths, checked
// against the reference's recorded answers before the fast decoder replaced it. Text in, value or
// error out; positions are UTF-16 code units (the test turns them into code points).
import { BodyEncodingError } from '../../src/http/json/json-decode.js';
import { JsonObject, PyFloat, type JsonValue } from '../../src/http/json/json-value.js';

export class ReferenceSyntaxError extends Error {
  constructor(
    readonly msg: string,
    readonly unit: number,
  ) {
    super(msg);
  }
}

export function referenceParse(text: string, depthMax: number): JsonValue {
  return parseText(text, depthMax);
}

const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const QUOTE = 0x22;
const PLUS = 0x2b;
const COMMA = 0x2c;
const MINUS = 0x2d;
const DOT = 0x2e;
const SLASH = 0x2f;
const DIGIT_0 = 0x30;
const DIGIT_1 = 0x31;
const DIGIT_9 = 0x39;
const COLON = 0x3a;
const UPPER_E = 0x45;
const LEFT_BRACKET = 0x5b;
const BACKSLASH = 0x5c;
const RIGHT_BRACKET = 0x5d;
const LOWER_E = 0x65;
const LOWER_U = 0x75;
const LEFT_BRACE = 0x7b;
const RIGHT_BRACE = 0x7d;

/** Python refuses to turn longer digit strings into an int (sys.get_int_max_str_digits()). */
const INT_MAX_STR_DIGITS = 4300;

/** Where the last scanString / scanNumber stopped; module variables spare a tuple per token. */
let scanEnd = 0;
/** The key scanMemberKey read. */
let scannedKey = '';

function parseText(s: string, depthMax: number): JsonValue {
  const n = s.length;
  // Open containers, innermost last; keys[k] is the pending key when containers[k] is an object.
  const containers: (JsonValue[] | Map<string, JsonValue>)[] = [];
  const keys: string[] = [];
  let i = skipWhitespace(s, 0);
  let value: JsonValue;

  for (;;) {
    // One term at i, as scan_once_unicode reads it.
    if (i >= n) throw new ReferenceSyntaxError('Expecting value', i);
    const c = s.charCodeAt(i);
    if (c === QUOTE) {
      value = scanString(s, i + 1);
      i = scanEnd;
    } else if (c === LEFT_BRACE || c === LEFT_BRACKET) {
      // Python's recursion check happens on entering the container, before reading its content.
      if (containers.length >= depthMax) {
        throw new BodyEncodingError(`JSON nesting deeper than ${depthMax}`);
      }
      i = skipWhitespace(s, i + 1);
      if (c === LEFT_BRACKET) {
        if (i < n && s.charCodeAt(i) === RIGHT_BRACKET) {
          value = [];
          i++;
        } else {
          containers.push([]);
          continue;
        }
      } else if (i < n && s.charCodeAt(i) === RIGHT_BRACE) {
        value = new JsonObject([]);
        i++;
      } else {
        i = scanMemberKey(s, i);
        keys.push(scannedKey);
        containers.push(new Map());
        continue;
      }
    } else if (c === 0x6e && i + 3 < n && matches(s, i + 1, 'ull')) {
      value = null;
      i += 4;
    } else if (c === 0x74 && i + 3 < n && matches(s, i + 1, 'rue')) {
      value = true;
      i += 4;
    } else if (c === 0x66 && i + 4 < n && matches(s, i + 1, 'alse')) {
      value = false;
      i += 5;
    } else {
      // NaN, Infinity and -Infinity land here too and fail as numbers: deviation D6.
      value = scanNumber(s, i);
      i = scanEnd;
    }

    // Hand the finished value to its container; close every container that ends right after it.
    for (;;) {
      const top = containers[containers.length - 1];
      if (top === undefined) {
        i = skipWhitespace(s, i);
        if (i !== n) throw new ReferenceSyntaxError('Extra data', i);
        return value;
      }
      i = skipWhitespace(s, i);
      const d = i < n ? s.charCodeAt(i) : -1;
      if (Array.isArray(top)) {
        top.push(value);
        if (d === RIGHT_BRACKET) {
          containers.pop();
          value = top;
          i++;
          continue;
        }
        if (d !== COMMA) throw new ReferenceSyntaxError("Expecting ',' delimiter", i);
        i = skipWhitespace(s, i + 1);
        break;
      }
      top.set(keys.pop() ?? '', value);
      if (d === RIGHT_BRACE) {
        containers.pop();
        value = JsonObject.fromEntries(top);
        i++;
        continue;
      }
      if (d !== COMMA) throw new ReferenceSyntaxError("Expecting ',' delimiter", i);
      i = scanMemberKey(s, skipWhitespace(s, i + 1));
      keys.push(scannedKey);
      break;
    }
  }
}

function matches(s: string, i: number, word: string): boolean {
  for (let k = 0; k < word.length; k++) {
    if (s.charCodeAt(i + k) !== word.charCodeAt(k)) return false;
  }
  return true;
}

function skipWhitespace(s: string, i: number): number {
  const n = s.length;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c !== SPACE && c !== TAB && c !== LF && c !== CR) break;
    i++;
  }
  return i;
}

/** Reads `"key"`, the colon and the whitespace after it; returns where the member's value starts. */
function scanMemberKey(s: string, i: number): number {
  const n = s.length;
  if (i >= n || s.charCodeAt(i) !== QUOTE) {
    throw new ReferenceSyntaxError('Expecting property name enclosed in double quotes', i);
  }
  scannedKey = scanString(s, i + 1);
  i = skipWhitespace(s, scanEnd);
  if (i >= n || s.charCodeAt(i) !== COLON)
    throw new ReferenceSyntaxError("Expecting ':' delimiter", i);
  return skipWhitespace(s, i + 1);
}

/** scanstring_unicode with strict=True; `start` is just past the opening quote. */
function scanString(s: string, start: number): string {
  const n = s.length;
  const begin = start - 1;
  let out = '';
  let chunkStart = start;
  let i = start;
  for (;;) {
    let c = 0;
    for (; i < n; i++) {
      c = s.charCodeAt(i);
      if (c === QUOTE || c === BACKSLASH) break;
      if (c < 0x20) throw new ReferenceSyntaxError('Invalid control character at', i);
    }
    if (i >= n) throw new ReferenceSyntaxError('Unterminated string starting at', begin);
    if (c === QUOTE) {
      scanEnd = i + 1;
      return chunkStart === start ? s.slice(start, i) : out + s.slice(chunkStart, i);
    }
    out += s.slice(chunkStart, i);
    i++;
    if (i === n) throw new ReferenceSyntaxError('Unterminated string starting at', begin);
    c = s.charCodeAt(i);
    if (c !== LOWER_U) {
      const unescaped = simpleEscape(c);
      if (unescaped === '') throw new ReferenceSyntaxError('Invalid \\escape', i - 1);
      out += unescaped;
      i++;
    } else {
      // i is at the 'u'; CPython reports every \u problem at the 'u' of the escape concerned.
      const digits = i + 1;
      if (digits + 4 >= n) throw new ReferenceSyntaxError('Invalid \\uXXXX escape', i);
      const unit = hex4(s, digits);
      if (unit < 0) throw new ReferenceSyntaxError('Invalid \\uXXXX escape', i);
      i = digits + 4;
      if (
        unit >= 0xd800 &&
        unit <= 0xdbff &&
        i + 6 < n &&
        s.charCodeAt(i) === BACKSLASH &&
        s.charCodeAt(i + 1) === LOWER_U
      ) {
        const low = hex4(s, i + 2);
        if (low < 0) throw new ReferenceSyntaxError('Invalid \\uXXXX escape', i + 1);
        if (low >= 0xdc00 && low <= 0xdfff) {
          out += String.fromCharCode(unit, low);
          i += 6;
        } else {
          // Not a pair: the second escape is read again on its own in the next round.
          out += String.fromCharCode(unit);
        }
      } else {
        // A lone surrogate stays a lone UTF-16 code unit: deviation D7.
        out += String.fromCharCode(unit);
      }
    }
    chunkStart = i;
  }
}

function simpleEscape(c: number): string {
  switch (c) {
    case QUOTE:
      return '"';
    case BACKSLASH:
      return '\\';
    case SLASH:
      return '/';
    case 0x62:
      return '\b';
    case 0x66:
      return '\f';
    case 0x6e:
      return '\n';
    case 0x72:
      return '\r';
    case 0x74:
      return '\t';
    default:
      return '';
  }
}

/** The value of four hex digits at i, or -1 if any of them is not one. */
function hex4(s: string, i: number): number {
  let v = 0;
  for (let k = i; k < i + 4; k++) {
    const c = s.charCodeAt(k);
    let d: number;
    if (c >= DIGIT_0 && c <= DIGIT_9) d = c - DIGIT_0;
    else if (c >= 0x61 && c <= 0x66) d = c - 0x61 + 10;
    else if (c >= 0x41 && c <= 0x46) d = c - 0x41 + 10;
    else return -1;
    v = (v << 4) | d;
  }
  return v;
}

function isDigit(c: number): boolean {
  return c >= DIGIT_0 && c <= DIGIT_9;
}

/** _match_number_unicode: an int or a float, else "Expecting value" at the token's start. */
function scanNumber(s: string, start: number): JsonValue {
  const n = s.length;
  const last = n - 1;
  let i = start;
  let c = s.charCodeAt(i);
  if (c === MINUS) {
    i++;
    if (i >= n) throw new ReferenceSyntaxError('Expecting value', start);
    c = s.charCodeAt(i);
  }
  if (c >= DIGIT_1 && c <= DIGIT_9) {
    i++;
    while (i < n && isDigit(s.charCodeAt(i))) i++;
  } else if (c === DIGIT_0) {
    i++;
  } else {
    throw new ReferenceSyntaxError('Expecting value', start);
  }
  const intEnd = i;
  let isFloat = false;
  // A '.' or 'e' counts only with a digit after it; otherwise the number ends before it.
  if (i < last && s.charCodeAt(i) === DOT && isDigit(s.charCodeAt(i + 1))) {
    isFloat = true;
    i += 2;
    while (i < n && isDigit(s.charCodeAt(i))) i++;
  }
  if (i < last && (s.charCodeAt(i) === LOWER_E || s.charCodeAt(i) === UPPER_E)) {
    const eStart = i;
    i++;
    if (i < last && (s.charCodeAt(i) === MINUS || s.charCodeAt(i) === PLUS)) i++;
    while (i < n && isDigit(s.charCodeAt(i))) i++;
    if (isDigit(s.charCodeAt(i - 1))) isFloat = true;
    else i = eStart;
  }
  scanEnd = i;
  const token = s.slice(start, i);
  if (isFloat) return new PyFloat(Number(token));
  const digitCount = intEnd - start - (s.charCodeAt(start) === MINUS ? 1 : 0);
  if (digitCount <= 15) {
    // `+ 0` turns the -0 of "-0" into Python's int 0.
    return Number(token) + 0;
  }
  if (digitCount > INT_MAX_STR_DIGITS) {
    throw new BodyEncodingError(
      `integer of ${digitCount} digits exceeds the limit of ${INT_MAX_STR_DIGITS}`,
    );
  }
  const big = BigInt(token);
  return big >= -BigInt(Number.MAX_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER)
    ? Number(big)
    : big;
}
