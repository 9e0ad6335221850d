// json.loads(body_bytes) of the reference (CPython 3.11, C scanner in Modules/_json.c), rebuilt so
// that a client gets the same "JSON decode error" items (message and position) as from FastAPI.
// Deliberate deviations: NaN / Infinity / -Infinity are rejected ("Expecting value"), and nesting
// is capped by depthMax instead of Python's recursion limit.

import { JsonObject, PyFloat, type JsonValue } from './json-value.js';

/** Python's json.JSONDecodeError: msg exactly as CPython 3.11 words it, pos = offset in code points of the decoded text. */
export class JsonSyntaxError extends Error {
  constructor(
    readonly msg: string,
    readonly pos: number,
  ) {
    super(`${msg}: char ${pos}`);
    this.name = 'JsonSyntaxError';
  }
}

/**
 * The body cannot be decoded at all (bad bytes for the detected encoding, nesting deeper than
 * depthMax, or an integer of more than 4300 digits, which Python refuses to convert): FastAPI
 * answers 400.
 */
export class BodyEncodingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BodyEncodingError';
  }
}

export function decodeJson(bytes: Uint8Array, depthMax: number): JsonValue {
  const decoded = decodeText(bytes);
  try {
    return parseText(decoded.text, depthMax);
  } catch (error: unknown) {
    if (error instanceof UnitSyntaxError) {
      throw new JsonSyntaxError(error.msg, codePointIndex(decoded, error.unit));
    }
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// Bytes to text: json.detect_encoding, then bytes.decode(encoding, 'surrogatepass').

/**
 * The decoded body. JS strings are UTF-16, so a high and a low surrogate that Python holds as two
 * separate code points (both produced by 'surrogatepass') look like one character here; splitPairs
 * lists the index of each such high surrogate so positions can still be counted Python's way.
 */
interface DecodedText {
  readonly text: string;
  readonly splitPairs: ReadonlySet<number> | null;
}

const utf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function decodeText(bytes: Uint8Array): DecodedText {
  const b0 = bytes[0];
  const b1 = bytes[1];
  const b2 = bytes[2];
  const b3 = bytes[3];
  // The BOM checks run in detect_encoding's order: FF FE 00 00 is UTF-32 before it is UTF-16.
  if (b0 === 0x00 && b1 === 0x00 && b2 === 0xfe && b3 === 0xff)
    return decodeUtf32(bytes.subarray(4), false);
  if (b0 === 0xff && b1 === 0xfe && b2 === 0x00 && b3 === 0x00)
    return decodeUtf32(bytes.subarray(4), true);
  if (b0 === 0xfe && b1 === 0xff) return decodeUtf16(bytes.subarray(2), false);
  if (b0 === 0xff && b1 === 0xfe) return decodeUtf16(bytes.subarray(2), true);
  if (b0 === 0xef && b1 === 0xbb && b2 === 0xbf) return decodeUtf8(bytes.subarray(3));
  if (bytes.length >= 4) {
    if (b0 === 0) return b1 !== 0 ? decodeUtf16(bytes, false) : decodeUtf32(bytes, false);
    if (b1 === 0) return b2 !== 0 || b3 !== 0 ? decodeUtf16(bytes, true) : decodeUtf32(bytes, true);
  } else if (bytes.length === 2) {
    if (b0 === 0) return decodeUtf16(bytes, false);
    if (b1 === 0) return decodeUtf16(bytes, true);
  }
  return decodeUtf8(bytes);
}

function decodeUtf8(bytes: Uint8Array): DecodedText {
  try {
    return { text: utf8Decoder.decode(bytes), splitPairs: null };
  } catch {
    // The strict decoder also refuses encoded surrogates, which surrogatepass lets through.
    return decodeUtf8SurrogatePass(bytes);
  }
}

/** Python's UTF-8 decoder with errors='surrogatepass': strict UTF-8, plus ED A0..BF 80..BF as a lone surrogate. */
function decodeUtf8SurrogatePass(bytes: Uint8Array): DecodedText {
  const out = new CodeUnitWriter(bytes.length);
  const n = bytes.length;
  let i = 0;
  while (i < n) {
    const b = bytes[i] ?? 0;
    if (b < 0x80) {
      out.push(b);
      i += 1;
      continue;
    }
    const c1 = bytes[i + 1] ?? 0;
    const c2 = bytes[i + 2] ?? 0;
    const c3 = bytes[i + 3] ?? 0;
    if (b >= 0xc2 && b <= 0xdf && i + 1 < n && isContinuation(c1)) {
      out.push(((b & 0x1f) << 6) | (c1 & 0x3f));
      i += 2;
    } else if (b >= 0xe0 && b <= 0xef && i + 2 < n && isContinuation(c1) && isContinuation(c2)) {
      const cp = ((b & 0x0f) << 12) | ((c1 & 0x3f) << 6) | (c2 & 0x3f);
      if (cp < 0x800) throw undecodable('utf-8', i);
      if (cp >= 0xd800 && cp <= 0xdfff) out.pushPassedSurrogate(cp);
      else out.push(cp);
      i += 3;
    } else if (
      b >= 0xf0 &&
      b <= 0xf4 &&
      i + 3 < n &&
      isContinuation(c1) &&
      isContinuation(c2) &&
      isContinuation(c3)
    ) {
      const cp = ((b & 0x07) << 18) | ((c1 & 0x3f) << 12) | ((c2 & 0x3f) << 6) | (c3 & 0x3f);
      if (cp < 0x10000 || cp > 0x10ffff) throw undecodable('utf-8', i);
      out.pushSupplementary(cp);
      i += 4;
    } else {
      throw undecodable('utf-8', i);
    }
  }
  return out.finish();
}

function isContinuation(byte: number): boolean {
  return (byte & 0xc0) === 0x80;
}

const utf16leDecoder = new TextDecoder('utf-16le', { fatal: true, ignoreBOM: true });
const utf16beDecoder = new TextDecoder('utf-16be', { fatal: true, ignoreBOM: true });

/** Python's UTF-16 decoder with surrogatepass: pairs join, lone surrogates pass, an odd byte fails. */
function decodeUtf16(bytes: Uint8Array, littleEndian: boolean): DecodedText {
  if (bytes.length % 2 !== 0) throw undecodable('utf-16', bytes.length - 1);
  try {
    // The native decoder gives the same text whenever it accepts the bytes: UTF-16 code units are
    // exactly what Python joins or keeps apart, so no pair is split.
    return {
      text: (littleEndian ? utf16leDecoder : utf16beDecoder).decode(bytes),
      splitPairs: null,
    };
  } catch {
    // It refuses lone surrogates, which surrogatepass lets through: decode unit by unit.
  }
  const out = new CodeUnitWriter(bytes.length / 2);
  for (let i = 0; i < bytes.length; i += 2) {
    const lo = bytes[littleEndian ? i : i + 1] ?? 0;
    const hi = bytes[littleEndian ? i + 1 : i] ?? 0;
    out.push((hi << 8) | lo);
  }
  return { text: out.finish().text, splitPairs: null };
}

/** Python's UTF-32 decoder with surrogatepass: a surrogate unit passes alone, beyond U+10FFFF fails. */
function decodeUtf32(bytes: Uint8Array, littleEndian: boolean): DecodedText {
  if (bytes.length % 4 !== 0) throw undecodable('utf-32', bytes.length - (bytes.length % 4));
  const out = new CodeUnitWriter(bytes.length / 2);
  for (let i = 0; i < bytes.length; i += 4) {
    const b0 = bytes[i] ?? 0;
    const b1 = bytes[i + 1] ?? 0;
    const b2 = bytes[i + 2] ?? 0;
    const b3 = bytes[i + 3] ?? 0;
    const cp = littleEndian
      ? (b3 * 0x1000000 + (b2 << 16)) | (b1 << 8) | b0
      : (b0 * 0x1000000 + (b1 << 16)) | (b2 << 8) | b3;
    if (cp < 0 || cp > 0x10ffff) throw undecodable('utf-32', i);
    if (cp >= 0xd800 && cp <= 0xdfff) out.pushPassedSurrogate(cp);
    else if (cp >= 0x10000) out.pushSupplementary(cp);
    else out.push(cp);
  }
  return out.finish();
}

function undecodable(encoding: string, offset: number): BodyEncodingError {
  return new BodyEncodingError(`'${encoding}' codec can't decode the body at byte ${offset}`);
}

/** Collects UTF-16 code units and remembers where two passed-through surrogates happen to touch. */
class CodeUnitWriter {
  private readonly units: Uint16Array;
  private length = 0;
  private lastWasPassedHigh = false;
  private splitPairs: Set<number> | null = null;

  constructor(capacity: number) {
    this.units = new Uint16Array(capacity);
  }

  push(unit: number): void {
    this.units[this.length++] = unit;
    this.lastWasPassedHigh = false;
  }

  pushSupplementary(cp: number): void {
    const v = cp - 0x10000;
    this.units[this.length++] = 0xd800 | (v >> 10);
    this.units[this.length++] = 0xdc00 | (v & 0x3ff);
    this.lastWasPassedHigh = false;
  }

  pushPassedSurrogate(unit: number): void {
    if (this.lastWasPassedHigh && unit >= 0xdc00) {
      this.splitPairs ??= new Set();
      this.splitPairs.add(this.length - 1);
    }
    this.units[this.length++] = unit;
    this.lastWasPassedHigh = unit < 0xdc00;
  }

  finish(): DecodedText {
    const chunk = 8192; // String.fromCharCode takes its units as arguments; keep the count small
    let text = '';
    for (let start = 0; start < this.length; start += chunk) {
      text += String.fromCharCode(
        ...this.units.subarray(start, Math.min(start + chunk, this.length)),
      );
    }
    return { text, splitPairs: this.splitPairs };
  }
}

/** Python counts code points; a JS index counts code units, so each whole surrogate pair before it counts once. */
function codePointIndex(decoded: DecodedText, unit: number): number {
  const { text, splitPairs } = decoded;
  let index = unit;
  for (let i = 0; i + 1 < unit; i++) {
    const c = text.charCodeAt(i);
    if (c < 0xd800 || c > 0xdbff) continue;
    const d = text.charCodeAt(i + 1);
    if (d >= 0xdc00 && d <= 0xdfff && !(splitPairs?.has(i) ?? false)) {
      index--;
      i++;
    }
  }
  return index;
}

// ---------------------------------------------------------------------------------------------
// Text to value: scan_once_unicode and friends, with an explicit stack instead of recursion.
//
// Every JSON body goes through here and a hostile client picks the body's shape, so each kind of
// token has a fast path and none is slow: the open container is held in typed locals rather than
// looked up on the stack, small integers are summed digit by digit (no slice, no Number()), a
// string without escapes is one slice, and a string with escapes is checked here (that is where
// Python's messages and positions come from) and then decoded by JSON.parse, whose escapes are
// Python's.

/** A syntax error positioned in UTF-16 code units; decodeJson turns it into Python's position. */
class UnitSyntaxError extends Error {
  constructor(
    readonly msg: string,
    readonly unit: number,
  ) {
    super(msg);
  }
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

/** Where the last readString / readNumber stopped; a module variable spares a tuple per token. */
let scanEnd = 0;

/**
 * The members of the containers being read, innermost last: an array's items, an object's keys and
 * values side by side. A container copies its part out in one slice when it closes, so nothing
 * grows item by item. Kept between calls so that it does not grow anew for every body; parseText
 * clears what it used, to hold on to no input.
 */
const scratch: (JsonValue | undefined)[] = [];

/** `{}` decodes to this one empty object: decoded objects are read-only, so sharing it is safe. */
const EMPTY_OBJECT = new JsonObject([]);

/** Up to this many keys a new key is checked against the others one by one; beyond, through a Map. */
const KEYS_SCANNED_MAX = 8;

function parseText(s: string, depthMax: number): JsonValue {
  const n = s.length;
  // The innermost open container's members start at scratch[start]. In an object, `slot` is where
  // the pending value goes (a repeated key's value replaces the earlier one in its place), and
  // `keyIndex` finds a key's slot once the object has too many keys to scan. At the top level
  // `slot` is TOP; in an array it is ARRAY. Enclosing containers wait on the parent stacks.
  const parentStarts: number[] = [];
  const parentSlots: number[] = [];
  const parentIndexes: (Map<string, number> | null)[] = [];
  let start = 0;
  let slot = TOP;
  let keyIndex: Map<string, number> | null = null;
  let top = 0;
  let used = 0;
  let depth = 0;
  let i = skipWhitespace(s, 0);
  let value: JsonValue;

  try {
    for (;;) {
      // One term at i, as scan_once_unicode reads it.
      const c = i < n ? s.charCodeAt(i) : -1;
      if (c === QUOTE) {
        value = readString(s, i);
        i = scanEnd;
      } else if ((c >= DIGIT_0 && c <= DIGIT_9) || c === MINUS) {
        // NaN, Infinity and -Infinity fail here or below as "Expecting value": deviation D6.
        value = readNumber(s, i);
        i = scanEnd;
      } else if (c === LEFT_BRACKET || c === LEFT_BRACE) {
        // Python's recursion check happens on entering the container, before reading its content.
        if (depth >= depthMax) throw new BodyEncodingError(`JSON nesting deeper than ${depthMax}`);
        i = skipWhitespace(s, i + 1);
        const d = i < n ? s.charCodeAt(i) : -1;
        if (c === LEFT_BRACKET && d === RIGHT_BRACKET) {
          value = [];
          i++;
        } else if (c === LEFT_BRACE && d === RIGHT_BRACE) {
          value = EMPTY_OBJECT;
          i++;
        } else {
          if (c === LEFT_BRACE) i = readMemberKey(s, i);
          parentStarts.push(start);
          parentSlots.push(slot);
          parentIndexes.push(keyIndex);
          depth++;
          start = top;
          keyIndex = null;
          if (c === LEFT_BRACKET) {
            slot = ARRAY;
          } else {
            slot = placeKey(scannedKey, start, top, null);
            keyIndex = placedIndex;
            top += 2;
          }
          continue;
        }
      } else if (c === 0x6e && s.startsWith('null', i)) {
        value = null;
        i += 4;
      } else if (c === 0x74 && s.startsWith('true', i)) {
        value = true;
        i += 4;
      } else if (c === 0x66 && s.startsWith('false', i)) {
        value = false;
        i += 5;
      } else {
        throw new UnitSyntaxError('Expecting value', i);
      }

      // Hand the finished value to its container; close every container that ends right after it.
      for (;;) {
        if (slot === ARRAY) {
          scratch[top++] = value;
          i = skipWhitespace(s, i);
          const d = i < n ? s.charCodeAt(i) : -1;
          if (d === COMMA) {
            i = skipWhitespace(s, i + 1);
            break;
          }
          if (d !== RIGHT_BRACKET) throw new UnitSyntaxError("Expecting ',' delimiter", i);
          value = scratch.slice(start, top) as JsonValue[];
        } else if (slot !== TOP) {
          scratch[slot] = value;
          i = skipWhitespace(s, i);
          const d = i < n ? s.charCodeAt(i) : -1;
          if (d === COMMA) {
            i = readMemberKey(s, skipWhitespace(s, i + 1));
            slot = placeKey(scannedKey, start, top, keyIndex);
            keyIndex = placedIndex;
            if (slot === top + 1) top += 2;
            break;
          }
          if (d !== RIGHT_BRACE) throw new UnitSyntaxError("Expecting ',' delimiter", i);
          value = new JsonObject(scratch.slice(start, top) as JsonValue[]);
        } else {
          i = skipWhitespace(s, i);
          if (i !== n) throw new UnitSyntaxError('Extra data', i);
          return value;
        }
        // The container just closed is the value; its parent becomes the open container.
        i++;
        depth--;
        if (top > used) used = top;
        top = start;
        start = parentStarts.pop() ?? 0;
        slot = parentSlots.pop() ?? TOP;
        keyIndex = parentIndexes.pop() ?? null;
      }
    }
  } finally {
    scratch.fill(undefined, 0, Math.max(used, top));
  }
}

/** `slot` at the top level, and in an array (an object's slots are scratch indexes). */
const TOP = -1;
const ARRAY = -2;

/** The key index placeKey used or made. */
let placedIndex: Map<string, number> | null = null;

/**
 * Where the value of `key` goes in the object whose members are scratch[start..top): the slot after
 * the key if it is there already (Python keeps its place and takes the last value), else top + 1,
 * with the key written at top (the caller then moves top on by two). Past KEYS_SCANNED_MAX keys, a
 * Map from key to slot spares a scan per key; it is handed back in placedIndex.
 */
function placeKey(
  key: string,
  start: number,
  top: number,
  index: Map<string, number> | null,
): number {
  placedIndex = index;
  if (index === null) {
    for (let k = start; k < top; k += 2) {
      if (scratch[k] === key) return k + 1;
    }
    scratch[top] = key;
    if (top - start < 2 * KEYS_SCANNED_MAX) return top + 1;
    index = new Map();
    for (let k = start; k <= top; k += 2) index.set(scratch[k] as string, k + 1);
    placedIndex = index;
    return top + 1;
  }
  const known = index.get(key);
  if (known !== undefined) return known;
  scratch[top] = key;
  index.set(key, top + 1);
  return top + 1;
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

/** The key readMemberKey read. */
let scannedKey = '';

/** Reads `"key"`, the colon and the whitespace after it into scannedKey; returns where the member's value starts. */
function readMemberKey(s: string, i: number): number {
  const n = s.length;
  if (i >= n || s.charCodeAt(i) !== QUOTE) {
    throw new UnitSyntaxError('Expecting property name enclosed in double quotes', i);
  }
  scannedKey = readString(s, i);
  i = skipWhitespace(s, scanEnd);
  if (i >= n || s.charCodeAt(i) !== COLON) throw new UnitSyntaxError("Expecting ':' delimiter", i);
  return skipWhitespace(s, i + 1);
}

/** scanstring_unicode with strict=True; `quote` is the opening quote's index. */
function readString(s: string, quote: number): string {
  const n = s.length;
  for (let i = quote + 1; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c === QUOTE) {
      scanEnd = i + 1;
      return s.slice(quote + 1, i);
    }
    if (c === BACKSLASH) return readEscapedString(s, quote, i);
    if (c < SPACE) throw new UnitSyntaxError('Invalid control character at', i);
  }
  throw new UnitSyntaxError('Unterminated string starting at', quote);
}

/**
 * The rest of a string from its first backslash: every escape is checked where CPython checks it
 * (and reported where CPython reports it), then JSON.parse decodes the whole token. Its escapes
 * mean what Python's mean, surrogates included: an escaped pair joins, a lone escaped surrogate
 * stays a lone UTF-16 code unit (deviation D7), and a high surrogate before a non-surrogate escape
 * stays alone.
 */
function readEscapedString(s: string, quote: number, backslash: number): string {
  const n = s.length;
  let i = backslash;
  for (;;) {
    i++;
    if (i === n) throw new UnitSyntaxError('Unterminated string starting at', quote);
    const c = s.charCodeAt(i);
    if (c === LOWER_U) {
      // CPython wants four hex digits and one more character after them, and names the 'u'.
      if (i + 5 >= n || !isHex4(s, i + 1)) throw new UnitSyntaxError('Invalid \\uXXXX escape', i);
      i += 5;
    } else if (isSimpleEscape(c)) {
      i++;
    } else {
      throw new UnitSyntaxError('Invalid \\escape', i - 1);
    }
    for (; ; i++) {
      if (i >= n) throw new UnitSyntaxError('Unterminated string starting at', quote);
      const d = s.charCodeAt(i);
      if (d === QUOTE) {
        scanEnd = i + 1;
        return JSON.parse(s.slice(quote, i + 1)) as string;
      }
      if (d === BACKSLASH) break;
      if (d < SPACE) throw new UnitSyntaxError('Invalid control character at', i);
    }
  }
}

function isSimpleEscape(c: number): boolean {
  return (
    c === QUOTE ||
    c === BACKSLASH ||
    c === SLASH ||
    c === 0x62 ||
    c === 0x66 ||
    c === 0x6e ||
    c === 0x72 ||
    c === 0x74
  );
}

function isHex4(s: string, i: number): boolean {
  for (let k = i; k < i + 4; k++) {
    const c = s.charCodeAt(k) | 0x20; // lower-cases A-F and leaves digits as they are
    if (!((c >= DIGIT_0 && c <= DIGIT_9) || (c >= 0x61 && c <= 0x66))) return false;
  }
  return true;
}

/** _match_number_unicode for a token that starts with '-' or a digit: an int or a float, else "Expecting value". */
function readNumber(s: string, start: number): JsonValue {
  const n = s.length;
  const last = n - 1;
  let i = start;
  const negative = s.charCodeAt(i) === MINUS;
  if (negative) i++;
  // The digits are summed as they are read; past the end charCodeAt gives NaN, which is no digit.
  let mantissa = s.charCodeAt(i) - DIGIT_0;
  if (mantissa === 0) {
    i++;
  } else if (mantissa >= 1 && mantissa <= 9) {
    for (i++; i < n; i++) {
      const d = s.charCodeAt(i) - DIGIT_0;
      if (d < 0 || d > 9) break;
      mantissa = mantissa * 10 + d;
    }
  } else {
    throw new UnitSyntaxError('Expecting value', start);
  }
  const intEnd = i;
  // A '.' or an 'e' belongs to the number only with a digit after it (and not as the last
  // character).
  let c = i < last ? s.charCodeAt(i) : -1;
  let isFloat = false;
  let exponent10 = 0;
  if (c === DOT && isDigit(s.charCodeAt(i + 1))) {
    isFloat = true;
    const fractionStart = ++i;
    for (; i < n; i++) {
      const d = s.charCodeAt(i) - DIGIT_0;
      if (d < 0 || d > 9) break;
      mantissa = mantissa * 10 + d;
    }
    exponent10 = fractionStart - i;
    c = i < last ? s.charCodeAt(i) : -1;
  }
  if (c === LOWER_E || c === UPPER_E) {
    let j = i + 1;
    const sign = s.charCodeAt(j);
    if (j < last && (sign === MINUS || sign === PLUS)) j++;
    const digitsStart = j;
    let written = 0;
    for (; j < n; j++) {
      const d = s.charCodeAt(j) - DIGIT_0;
      if (d < 0 || d > 9) break;
      written = written * 10 + d;
    }
    if (j > digitsStart) {
      isFloat = true;
      i = j;
      exponent10 += sign === MINUS ? -written : written;
    }
  }
  if (isFloat) {
    scanEnd = i;
    return new PyFloat(floatOf(s, start, i, negative, mantissa, exponent10));
  }
  scanEnd = intEnd;
  // A sum of digits is exact while it stays safe, and one that passed 2^53 never rounds back below
  // it.
  if (mantissa <= Number.MAX_SAFE_INTEGER) return negative ? 0 - mantissa : mantissa; // 0 - 0 is Python's int 0
  const digitCount = intEnd - start - (negative ? 1 : 0);
  if (digitCount > INT_MAX_STR_DIGITS) {
    throw new BodyEncodingError(
      `integer of ${digitCount} digits exceeds the limit of ${INT_MAX_STR_DIGITS}`,
    );
  }
  return BigInt(s.slice(start, intEnd));
}

/** Exact powers of ten: every one up to 10^22 is a double. */
const POWERS_OF_TEN = Array.from({ length: 23 }, (_, k) => Number(`1e${k}`));

/**
 * float(token), correctly rounded. When the digits form a safe integer and the power of ten is
 * exact, one multiplication or division rounds once and so gives the correctly rounded value
 * (Clinger's fast path); anything else goes to Number(), which rounds correctly too but costs a
 * slice and a parse.
 */
function floatOf(
  s: string,
  start: number,
  end: number,
  negative: boolean,
  mantissa: number,
  exponent10: number,
): number {
  if (mantissa <= Number.MAX_SAFE_INTEGER && exponent10 >= -22 && exponent10 <= 22) {
    const magnitude =
      exponent10 < 0
        ? mantissa / (POWERS_OF_TEN[-exponent10] as number)
        : mantissa * (POWERS_OF_TEN[exponent10] as number);
    return negative ? -magnitude : magnitude;
  }
  return Number(s.slice(start, end));
}

function isDigit(c: number): boolean {
  return c >= DIGIT_0 && c <= DIGIT_9;
}
