// The oracle for how json.loads(body_bytes) turns bytes into text (CPython 3.11):
// json.detect_encoding, then bytes.decode(encoding, 'surrogatepass'). Written from the codecs'
// definitions, table by table and without fast paths, so that it shares no code and no structure
// with src/http/json/json-decode.ts. Text comes out as Python holds it, a list of code points (a
// lone surrogate is one code point; two that happen to touch stay two).

/** The encodings detect_encoding can choose. */
export type PythonEncoding =
  | 'utf-8'
  | 'utf-8-sig'
  | 'utf-16'
  | 'utf-16-be'
  | 'utf-16-le'
  | 'utf-32'
  | 'utf-32-be'
  | 'utf-32-le';

/** json.detect_encoding, line for line. */
export function detectEncoding(b: Uint8Array): PythonEncoding {
  const startsWith = (...prefix: number[]): boolean => prefix.every((byte, k) => b[k] === byte);
  if (startsWith(0x00, 0x00, 0xfe, 0xff) || startsWith(0xff, 0xfe, 0x00, 0x00)) return 'utf-32';
  if (startsWith(0xfe, 0xff) || startsWith(0xff, 0xfe)) return 'utf-16';
  if (startsWith(0xef, 0xbb, 0xbf)) return 'utf-8-sig';
  if (b.length >= 4) {
    if (!b[0]) return b[1] ? 'utf-16-be' : 'utf-32-be';
    if (!b[1]) return b[2] || b[3] ? 'utf-16-le' : 'utf-32-le';
  } else if (b.length === 2) {
    if (!b[0]) return 'utf-16-be';
    if (!b[1]) return 'utf-16-le';
  }
  return 'utf-8';
}

/** The code points of bytes.decode(encoding, 'surrogatepass'), or undefined where Python raises. */
export function decodeSurrogatePass(b: Uint8Array, encoding: PythonEncoding): number[] | undefined {
  switch (encoding) {
    case 'utf-8':
      return utf8(b);
    case 'utf-8-sig':
      return utf8(b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? b.subarray(3) : b);
    case 'utf-16':
      // The codec reads the byte order mark (detect_encoding only chose this codec when there is
      // one).
      return b[0] === 0xff && b[1] === 0xfe
        ? utf16(b.subarray(2), true)
        : utf16(b.subarray(2), false);
    case 'utf-16-be':
      return utf16(b, false);
    case 'utf-16-le':
      return utf16(b, true);
    case 'utf-32':
      return b[0] === 0xff ? utf32(b.subarray(4), true) : utf32(b.subarray(4), false);
    case 'utf-32-be':
      return utf32(b, false);
    case 'utf-32-le':
      return utf32(b, true);
  }
}

/**
 * The well-formed UTF-8 sequences (Unicode, table 3-7), by lead byte: how many continuation bytes
 * follow and the range of the first of them (the others are always 80..BF). With 'surrogatepass'
 * the ED row takes A0..BF too, the encoded surrogates D800..DFFF.
 */
const UTF8_ROWS: readonly {
  readonly lead: readonly [number, number];
  readonly more: number;
  readonly second: readonly [number, number];
}[] = [
  { lead: [0xc2, 0xdf], more: 1, second: [0x80, 0xbf] },
  { lead: [0xe0, 0xe0], more: 2, second: [0xa0, 0xbf] },
  { lead: [0xe1, 0xec], more: 2, second: [0x80, 0xbf] },
  { lead: [0xed, 0xed], more: 2, second: [0x80, 0xbf] },
  { lead: [0xee, 0xef], more: 2, second: [0x80, 0xbf] },
  { lead: [0xf0, 0xf0], more: 3, second: [0x90, 0xbf] },
  { lead: [0xf1, 0xf3], more: 3, second: [0x80, 0xbf] },
  { lead: [0xf4, 0xf4], more: 3, second: [0x80, 0x8f] },
];

const within = (value: number | undefined, [low, high]: readonly [number, number]): boolean =>
  value !== undefined && value >= low && value <= high;

function utf8(b: Uint8Array): number[] | undefined {
  const out: number[] = [];
  let i = 0;
  while (i < b.length) {
    const lead = b[i] as number;
    if (lead < 0x80) {
      out.push(lead);
      i += 1;
      continue;
    }
    const row = UTF8_ROWS.find((r) => within(lead, r.lead));
    if (row === undefined || !within(b[i + 1], row.second)) return undefined;
    for (let k = 2; k <= row.more; k++) if (!within(b[i + k], [0x80, 0xbf])) return undefined;
    // The lead byte keeps 7 - (more + 1) bits; each continuation byte gives 6.
    let cp = lead & (0x7f >> (row.more + 1));
    for (let k = 1; k <= row.more; k++) cp = cp * 64 + ((b[i + k] as number) - 0x80);
    out.push(cp);
    i += row.more + 1;
  }
  return out;
}

function utf16(b: Uint8Array, littleEndian: boolean): number[] | undefined {
  if (b.length % 2 !== 0) return undefined; // "truncated data"
  const units: number[] = [];
  for (let i = 0; i < b.length; i += 2)
    units.push(
      littleEndian
        ? (b[i] as number) + 256 * (b[i + 1] as number)
        : 256 * (b[i] as number) + (b[i + 1] as number),
    );
  const out: number[] = [];
  for (let k = 0; k < units.length; k++) {
    const unit = units[k] as number;
    const next = units[k + 1];
    // A high surrogate followed by a low one is one character; any other surrogate passes alone.
    if (
      unit >= 0xd800 &&
      unit <= 0xdbff &&
      next !== undefined &&
      next >= 0xdc00 &&
      next <= 0xdfff
    ) {
      out.push(0x10000 + (unit - 0xd800) * 0x400 + (next - 0xdc00));
      k++;
    } else {
      out.push(unit);
    }
  }
  return out;
}

function utf32(b: Uint8Array, littleEndian: boolean): number[] | undefined {
  if (b.length % 4 !== 0) return undefined; // "truncated data"
  const out: number[] = [];
  for (let i = 0; i < b.length; i += 4) {
    const bytes = [b[i], b[i + 1], b[i + 2], b[i + 3]] as number[];
    if (littleEndian) bytes.reverse();
    const cp = bytes.reduce((value, byte) => value * 256 + byte, 0);
    if (cp > 0x10ffff) return undefined; // "code point not in range(0x110000)"; surrogates pass, each alone
    out.push(cp);
  }
  return out;
}

/** The text as JavaScript holds it: each code point as one or two UTF-16 code units. */
export function textOf(codePoints: readonly number[]): string {
  let text = '';
  for (const cp of codePoints)
    text += cp > 0xffff ? String.fromCodePoint(cp) : String.fromCharCode(cp);
  return text;
}

/** For each UTF-16 unit index of textOf(codePoints) (and its end), the index of its code point. */
export function codePointIndexes(codePoints: readonly number[]): number[] {
  const indexes: number[] = [];
  codePoints.forEach((cp, k) => {
    indexes.push(k);
    if (cp > 0xffff) indexes.push(k);
  });
  indexes.push(codePoints.length);
  return indexes;
}

// ------------------------------------------------------------------------ encoders, for generating

/** Code points to bytes in one of the encodings, surrogates encoded as themselves (what surrogatepass reads back). */
export function encodeSurrogatePass(
  codePoints: readonly number[],
  encoding: 'utf-8' | 'utf-16-be' | 'utf-16-le' | 'utf-32-be' | 'utf-32-le',
): number[] {
  const out: number[] = [];
  for (const cp of codePoints) {
    switch (encoding) {
      case 'utf-8':
        if (cp < 0x80) out.push(cp);
        else if (cp < 0x800) out.push(0xc0 | (cp >> 6), 0x80 | (cp & 0x3f));
        else if (cp < 0x10000)
          out.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
        else
          out.push(
            0xf0 | (cp >> 18),
            0x80 | ((cp >> 12) & 0x3f),
            0x80 | ((cp >> 6) & 0x3f),
            0x80 | (cp & 0x3f),
          );
        break;
      case 'utf-16-be':
      case 'utf-16-le': {
        const units =
          cp > 0xffff ? [0xd800 + ((cp - 0x10000) >> 10), 0xdc00 + ((cp - 0x10000) & 0x3ff)] : [cp];
        for (const unit of units)
          out.push(
            ...(encoding === 'utf-16-le' ? [unit & 0xff, unit >> 8] : [unit >> 8, unit & 0xff]),
          );
        break;
      }
      case 'utf-32-be':
      case 'utf-32-le': {
        const bytes = [(cp >>> 24) & 0xff, (cp >> 16) & 0xff, (cp >> 8) & 0xff, cp & 0xff];
        out.push(...(encoding === 'utf-32-le' ? bytes.reverse() : bytes));
        break;
      }
    }
  }
  return out;
}
