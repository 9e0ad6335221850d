// json.dumps(value, ensure_ascii=False, separators=(",", ":")) of the reference, for response bodies.
// Python escapes a string exactly as JSON.stringify does (", \, \b \f \n \r \t, other controls as
// lowercase \u00xx, everything else raw) except for lone surrogates: Python writes them raw and then
// fails to encode the body as UTF-8, JSON.stringify writes \udxxx. We keep the escape (deviation D7).

import { JsonObject, PyFloat } from './json-value.js';

/** Serialise like Python's json.dumps(v, ensure_ascii=False, separators=(",", ":")) – compact, non-ASCII kept raw. */
export function encodeJson(value: unknown): string {
  return encodeValue(value, 0, Infinity);
}

/**
 * A value to be written in at most about `charsMax` characters (an echo of client input in a 422):
 * past that, strings are cut and arrays and objects keep only their first members. It stays valid
 * JSON of the same shape; what is cut off is simply not there.
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
      return room === Infinity ? JSON.stringify(value) : encodeCutString(value, room);
    case 'number':
      return Number.isFinite(value) ? String(value + 0) : 'null';
    case 'bigint':
      return value.toString();
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      if (value === null) return 'null';
      if (value instanceof PyFloat) return pyFloatRepr(value.value);
      if (value instanceof Bounded) return encodeValue(value.value, depth, Math.min(room, value.charsMax));
      return encodeContainer(value, depth + 1, room);
    default:
      // undefined, functions and symbols have no JSON form; JSON.stringify writes null in their place.
      return 'null';
  }
}

/** The string, cut so that its JSON form takes at most `room` characters (at least the quotes). */
function encodeCutString(value: string, room: number): string {
  let text = value;
  let encoded = JSON.stringify(text);
  while (encoded.length > room && text.length > 0) {
    // Escapes make some characters longer than one: cut in proportion, then check again.
    let keep = Math.min(text.length - 1, Math.floor((text.length * Math.max(room - 2, 0)) / (encoded.length - 2)));
    // Never keep half of a surrogate pair.
    const last = text.charCodeAt(keep - 1);
    if (keep > 0 && last >= 0xd800 && last <= 0xdbff) keep--;
    text = text.slice(0, keep);
    encoded = JSON.stringify(text);
  }
  return encoded;
}

// Objects are walked by key (Object.keys, Map.forEach) rather than by entry arrays: error bodies are
// encoded on every 4xx, and the per-entry arrays were most of the encoder's cost. Inside a Bounded, a
// container keeps whole members while they fit its room; only a first member too large alone is cut.
function encodeContainer(value: object, depth: number, room: number): string {
  if (depth > NESTING_MAX) throw new TypeError('Circular reference detected (or nesting too deep)');
  let out: string;
  if (Array.isArray(value)) {
    out = '[';
    for (let k = 0; k < value.length; k++) {
      const item = encodeValue(value[k], depth, room);
      if (k > 0) {
        if (out.length + item.length + 2 > room) break;
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
      const name = room === Infinity ? JSON.stringify(String(key)) : encodeCutString(String(key), room);
      const entry = `${name}:${encodeValue(member, depth, room - name.length - 1)}`;
      if (out.length > 1) {
        full = out.length + entry.length + 2 > room;
        if (full) return;
        out += ',';
      }
      out += entry;
    });
    out += '}';
  } else {
    out = '{';
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const member = record[key];
      if (!hasJsonForm(member)) continue;
      if (out.length > 1) out += ',';
      out += memberName(key) + encodeValue(member, depth, room - out.length);
    }
    out += '}';
  }
  return out;
}

// The member names of our own objects are few and repeat on every answer ("detail", "loc", "msg"…),
// so their encoded form is kept. Decoded input (Maps) is not cached: its names are the client's.
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
    // JS writes this whole range positionally (it switches to exponents only below 1e-6 or from 1e21).
    const text = String(x);
    return text.includes('.') ? text : text + '.0';
  }
  const [mantissa = '', exponentText = '0'] = x.toExponential().split('e');
  const exponent = Number(exponentText);
  const sign = exponent < 0 ? '-' : '+';
  const digits = String(Math.abs(exponent)).padStart(2, '0');
  return `${mantissa}e${sign}${digits}`;
}
