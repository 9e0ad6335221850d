// json.dumps(value, ensure_ascii=False, separators=(",", ":")) of the reference, for response bodies.
// Python escapes a string exactly as JSON.stringify does (", \, \b \f \n \r \t, other controls as
// lowercase \u00xx, everything else raw) except for lone surrogates: Python writes them raw and then
// fails to encode the body as UTF-8, JSON.stringify writes \udxxx. We keep the escape (deviation D7).

import { PyFloat } from './json-value.js';

/** Serialise like Python's json.dumps(v, ensure_ascii=False, separators=(",", ":")) – compact, non-ASCII kept raw. */
export function encodeJson(value: unknown): string {
  return encodeValue(value, []);
}

/** `open` holds the containers being written, to refuse a cycle instead of recursing forever. */
function encodeValue(value: unknown, open: object[]): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value + 0) : 'null';
    case 'bigint':
      return value.toString();
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      if (value === null) return 'null';
      if (value instanceof PyFloat) return pyFloatRepr(value.value);
      return encodeContainer(value, open);
    default:
      // undefined, functions and symbols have no JSON form; JSON.stringify writes null in their place.
      return 'null';
  }
}

// Objects are walked by key (Object.keys, Map.forEach) rather than by entry arrays: error bodies are
// encoded on every 4xx, and the per-entry arrays were most of the encoder's cost.
function encodeContainer(value: object, open: object[]): string {
  if (open.includes(value)) throw new TypeError('Circular reference detected');
  open.push(value);
  let out: string;
  if (Array.isArray(value)) {
    out = '[';
    for (let k = 0; k < value.length; k++) {
      if (k > 0) out += ',';
      out += encodeValue(value[k], open);
    }
    out += ']';
  } else if (value instanceof Map) {
    out = '{';
    (value as Map<unknown, unknown>).forEach((member, key) => {
      if (!hasJsonForm(member)) return;
      if (out.length > 1) out += ',';
      out += JSON.stringify(String(key)) + ':' + encodeValue(member, open);
    });
    out += '}';
  } else {
    out = '{';
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const member = record[key];
      if (!hasJsonForm(member)) continue;
      if (out.length > 1) out += ',';
      out += memberName(key) + encodeValue(member, open);
    }
    out += '}';
  }
  open.pop();
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
