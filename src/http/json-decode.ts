// json.loads(body_bytes) of the reference (CPython 3.11, C scanner in Modules/_json.c), rebuilt so
// that a client gets the same "JSON decode error" items (message and position) as from FastAPI.
// Deliberate deviations: NaN / Infinity / -Infinity are rejected ("Expecting value"), and nesting
// is capped by depthMax instead of Python's recursion limit.

import { PyFloat, type JsonObject, type JsonValue } from './json-value.js';

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
 * depthMax, or an integer of more than 4300 digits, which Python refuses to convert): FastAPI answers 400.
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
  if (b0 === 0x00 && b1 === 0x00 && b2 === 0xfe && b3 === 0xff) return decodeUtf32(bytes.subarray(4), false);
  if (b0 === 0xff && b1 === 0xfe && b2 === 0x00 && b3 === 0x00) return decodeUtf32(bytes.subarray(4), true);
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

/** Python's UTF-16 decoder with surrogatepass: pairs join, lone surrogates pass, an odd byte fails. */
function decodeUtf16(bytes: Uint8Array, littleEndian: boolean): DecodedText {
  if (bytes.length % 2 !== 0) throw undecodable('utf-16', bytes.length - 1);
  const out = new CodeUnitWriter(bytes.length / 2);
  for (let i = 0; i < bytes.length; i += 2) {
    const lo = bytes[littleEndian ? i : i + 1] ?? 0;
    const hi = bytes[littleEndian ? i + 1 : i] ?? 0;
    out.push((hi << 8) | lo);
  }
  // UTF-16 code units are exactly what Python joins or keeps apart, so no pair is split.
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
      text += String.fromCharCode(...this.units.subarray(start, Math.min(start + chunk, this.length)));
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
  const containers: (JsonValue[] | JsonObject)[] = [];
  const keys: string[] = [];
  let i = skipWhitespace(s, 0);
  let value: JsonValue;

  for (;;) {
    // One term at i, as scan_once_unicode reads it.
    if (i >= n) throw new UnitSyntaxError('Expecting value', i);
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
        value = new Map();
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
        if (i !== n) throw new UnitSyntaxError('Extra data', i);
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
        if (d !== COMMA) throw new UnitSyntaxError("Expecting ',' delimiter", i);
        i = skipWhitespace(s, i + 1);
        break;
      }
      top.set(keys.pop() ?? '', value);
      if (d === RIGHT_BRACE) {
        containers.pop();
        value = top;
        i++;
        continue;
      }
      if (d !== COMMA) throw new UnitSyntaxError("Expecting ',' delimiter", i);
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
    throw new UnitSyntaxError('Expecting property name enclosed in double quotes', i);
  }
  scannedKey = scanString(s, i + 1);
  i = skipWhitespace(s, scanEnd);
  if (i >= n || s.charCodeAt(i) !== COLON) throw new UnitSyntaxError("Expecting ':' delimiter", i);
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
      if (c < 0x20) throw new UnitSyntaxError('Invalid control character at', i);
    }
    if (i >= n) throw new UnitSyntaxError('Unterminated string starting at', begin);
    if (c === QUOTE) {
      scanEnd = i + 1;
      return chunkStart === start ? s.slice(start, i) : out + s.slice(chunkStart, i);
    }
    out += s.slice(chunkStart, i);
    i++;
    if (i === n) throw new UnitSyntaxError('Unterminated string starting at', begin);
    c = s.charCodeAt(i);
    if (c !== LOWER_U) {
      const unescaped = simpleEscape(c);
      if (unescaped === '') throw new UnitSyntaxError('Invalid \\escape', i - 1);
      out += unescaped;
      i++;
    } else {
      // i is at the 'u'; CPython reports every \u problem at the 'u' of the escape concerned.
      const digits = i + 1;
      if (digits + 4 >= n) throw new UnitSyntaxError('Invalid \\uXXXX escape', i);
      const unit = hex4(s, digits);
      if (unit < 0) throw new UnitSyntaxError('Invalid \\uXXXX escape', i);
      i = digits + 4;
      if (
        unit >= 0xd800 &&
        unit <= 0xdbff &&
        i + 6 < n &&
        s.charCodeAt(i) === BACKSLASH &&
        s.charCodeAt(i + 1) === LOWER_U
      ) {
        const low = hex4(s, i + 2);
        if (low < 0) throw new UnitSyntaxError('Invalid \\uXXXX escape', i + 1);
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
    if (i >= n) throw new UnitSyntaxError('Expecting value', start);
    c = s.charCodeAt(i);
  }
  if (c >= DIGIT_1 && c <= DIGIT_9) {
    i++;
    while (i < n && isDigit(s.charCodeAt(i))) i++;
  } else if (c === DIGIT_0) {
    i++;
  } else {
    throw new UnitSyntaxError('Expecting value', start);
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
    throw new BodyEncodingError(`integer of ${digitCount} digits exceeds the limit of ${INT_MAX_STR_DIGITS}`);
  }
  const big = BigInt(token);
  return big >= -BigInt(Number.MAX_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
}
