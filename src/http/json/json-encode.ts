// json.dumps(value, ensure_ascii=False, separators=(",", ":")) of the reference, for response
// bodies. Python escapes a string exactly as JSON.stringify does (", \, \b \f \n \r \t, other
// controls as lowercase \u00xx, everything else raw) except for lone surrogates: Python writes them
// raw and then fails to encode the body as UTF-8, JSON.stringify writes \udxxx. We keep the escape
// (deviation D7).

import { jsonString } from '../../common/json-string.js';
import { JsonObject, PyFloat } from './json-value.js';

/** Serialise like Python's json.dumps(v, ensure_ascii=False, separators=(",", ":")) – compact, non-ASCII kept raw. */
export function encodeJson(value: unknown): string {
  return encodeValue(value, 0, Infinity);
}

/**
 * `encodeJson(new Bounded(value, charsMax))` without the Bounded: a 422 echoes its input on every
 * rejected request, and optimized code that checked for the map of a Bounded made and dropped on
 * each request was thrown away whenever a full collection found no Bounded alive (V8 lets such a
 * map die), to run interpreted and be compiled again (docs/performance.md).
 */
export function encodeJsonWithin(value: unknown, charsMax: number): string {
  const cutsBefore = cutsMade;
  const written = encodeValue(value, 0, charsMax);
  cutsMade = cutsBefore;
  return written;
}

/**
 * A value to be written in at most `charsMax` characters (an echo of client input in a 422): past
 * that, a string keeps its longest start that fits and an array or object the longest run of its
 * first members that fits whole. It stays valid JSON of the same shape; what is cut off is simply
 * not there. Only numbers, booleans and null, which are never cut, can take it past `charsMax`.
 */
export class Bounded {
  constructor(
    readonly value: unknown,
    readonly charsMax: number,
  ) {}
}

/**
 * Deeper than this is a cycle (or nothing we write): decoded input is at most 512 deep and our own
 * bodies add a few levels. A depth count refuses a cycle at the cost of one comparison a container.
 */
const NESTING_MAX = 1000;

/** `room`: how many characters the value may still take (Infinity outside a Bounded). */
function encodeValue(value: unknown, depth: number, room: number): string {
  switch (typeof value) {
    case 'string':
      return encodeString(value, room);
    case 'number':
      return Number.isFinite(value) ? String(value + 0) : 'null';
    case 'bigint':
      return value.toString();
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      if (value === null) return 'null';
      if (value instanceof PyFloat) return pyFloatRepr(value.value);
      if (value instanceof Bounded) return encodeBounded(value, depth, room);
      return encodeContainer(value, depth + 1, room);
    default:
      // undefined, functions and symbols have no JSON form; JSON.stringify writes null in their
      // place.
      return 'null';
  }
}

/**
 * How many cuts the Bounded values have made so far (a string shortened, members left out). A
 * container compares it around a later member so as to keep that member only whole. Encoding runs
 * to its end synchronously, so one counter serves every call.
 */
let cutsMade = 0;

/**
 * A Bounded's cuts under its own limit are its own: a container around it with more room (the list
 * of a 422's errors has all it needs) keeps it as written, whole, like any member that fits.
 */
function encodeBounded(value: Bounded, depth: number, room: number): string {
  const cutsBefore = cutsMade;
  const written = encodeValue(value.value, depth, Math.min(room, value.charsMax));
  if (value.charsMax < room) cutsMade = cutsBefore;
  return written;
}

/**
 * The string, or else the longest start of it whose JSON form takes at most `room` characters (at
 * least the quotes): whole characters and whole escapes only, never half of a surrogate pair.
 */
function encodeString(value: string, room: number): string {
  // Every code unit takes at least one character, so a string longer than its room cannot fit whole
  // and a megabyte of client input is never escaped only to be cut.
  if (value.length + 2 <= room) {
    // jsonString: a plain string without a call into V8's runtime (a 422 writes half a dozen).
    const encoded = jsonString(value);
    if (encoded.length <= room) return encoded;
  }
  const budget = room - 2;
  let used = 0;
  let kept = 0;
  while (kept < value.length) {
    const unit = value.charCodeAt(kept);
    const pair = unit >= 0xd800 && unit <= 0xdbff && isLowSurrogate(value.charCodeAt(kept + 1));
    const width = pair ? 2 : escapedWidth(unit);
    if (used + width > budget) break;
    used += width;
    kept += pair ? 2 : 1;
  }
  cutsMade++;
  return JSON.stringify(value.slice(0, kept));
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/** How many characters JSON.stringify writes for one code unit that is not half of a pair. */
function escapedWidth(unit: number): number {
  if (unit === 0x22 || unit === 0x5c) return 2; // \" and \\
  if (unit < 0x20)
    return unit === 0x08 || unit === 0x09 || unit === 0x0a || unit === 0x0c || unit === 0x0d
      ? 2
      : 6;
  if (unit >= 0xd800 && unit <= 0xdfff) return 6; // a lone surrogate: \udxxx
  return 1;
}

// Objects are walked by key (Object.keys, Map.forEach) rather than by entry arrays: error bodies
// are encoded on every 4xx, and the per-entry arrays were most of the encoder's cost.
//
// Inside a Bounded, a container keeps its first members while they fit its room whole, brackets and
// commas counted; only a first member too large alone is cut, to what the brackets leave. Numbers,
// booleans and null are never cut, so only they can make a value longer than its room.
function encodeContainer(value: object, depth: number, room: number): string {
  if (depth > NESTING_MAX) throw new TypeError('Circular reference detected (or nesting too deep)');
  let out: string;
  if (Array.isArray(value)) {
    out = '[';
    for (let k = 0; k < value.length; k++) {
      const cutsBefore = cutsMade;
      // What the closing bracket and, after the first item, the comma leave.
      const item = encodeValue(value[k], depth, room - out.length - (k > 0 ? 2 : 1));
      if (k > 0) {
        if (cutsMade !== cutsBefore || out.length + item.length + 2 > room) {
          cutsMade++;
          break;
        }
        out += ',';
      }
      out += item;
    }
    out += ']';
  } else if (value instanceof JsonObject || value instanceof Map) {
    out = '{';
    let full = false;
    (value as ReadonlyMap<unknown, unknown>).forEach((member, key) => {
      if (full || !hasJsonForm(member)) return;
      const cutsBefore = cutsMade;
      const left = room - out.length - (out.length > 1 ? 2 : 1);
      // The name leaves room for its colon and for the least its value can be cut to.
      const name = encodeString(String(key), left - 1 - leastLength(member, depth));
      const entry = `${name}:${encodeValue(member, depth, left - name.length - 1)}`;
      if (out.length > 1) {
        full = cutsMade !== cutsBefore || out.length + entry.length + 2 > room;
        if (full) {
          cutsMade++;
          return;
        }
        out += ',';
      }
      out += entry;
    });
    out += '}';
  } else {
    // Our own objects (the bodies we answer with): never inside a Bounded, which holds decoded
    // input only (Maps, arrays and scalars), so written whole.
    out = '{';
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const member = record[key];
      if (!hasJsonForm(member)) continue;
      if (out.length > 1) out += ',';
      out += memberName(key) + encodeValue(member, depth, room);
    }
    out += '}';
  }
  return out;
}

/**
 * The fewest characters a value can be cut to: its first members only, its strings and names
 * emptied; numbers, booleans and null whole.
 */
function leastLength(value: unknown, depth: number): number {
  if (depth > NESTING_MAX) throw new TypeError('Circular reference detected (or nesting too deep)');
  if (typeof value === 'string') return 2;
  if (value instanceof Bounded) return leastLength(value.value, depth);
  if (Array.isArray(value)) return value.length === 0 ? 2 : 2 + leastLength(value[0], depth + 1);
  if (value instanceof JsonObject || value instanceof Map) {
    for (const member of (value as ReadonlyMap<unknown, unknown>).values()) {
      if (hasJsonForm(member)) return 5 + leastLength(member, depth + 1); // {"":…}
    }
    return 2;
  }
  return encodeValue(value, depth, Infinity).length;
}

// The member names of our own objects are few and repeat on every response ("detail", "loc",
// "msg"…), so their encoded form is kept. Decoded input (Maps) is not cached: its names are the
// client's.
const MEMBER_NAMES_CACHED_MAX = 256;
const memberNames = new Map<string, string>();

function memberName(key: string): string {
  let encoded = memberNames.get(key);
  if (encoded === undefined) {
    encoded = JSON.stringify(key) + ':';
    if (memberNames.size < MEMBER_NAMES_CACHED_MAX) memberNames.set(key, encoded);
  }
  return encoded;
}

/** As in JSON.stringify, an object member that is undefined, a function or a symbol is left out. */
function hasJsonForm(member: unknown): boolean {
  return member !== undefined && typeof member !== 'function' && typeof member !== 'symbol';
}

/**
 * repr(float): the shortest digits that round-trip (JS finds the same ones), positional for decimal
 * exponents -4..15 with at least one digit after the point, scientific otherwise with a signed
 * two-digit-minimum exponent. Non-finite values have no JSON form; we write null.
 */
function pyFloatRepr(x: number): string {
  if (!Number.isFinite(x)) return 'null';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const magnitude = Math.abs(x);
  if (magnitude >= 1e-4 && magnitude < 1e16) {
    // JS writes this whole range positionally (it switches to exponents only below 1e-6 or from
    // 1e21).
    const text = String(x);
    return text.includes('.') ? text : text + '.0';
  }
  const [mantissa = '', exponentText = '0'] = x.toExponential().split('e');
  const exponent = Number(exponentText);
  const sign = exponent < 0 ? '-' : '+';
  const digits = String(Math.abs(exponent)).padStart(2, '0');
  return `${mantissa}e${sign}${digits}`;
}
