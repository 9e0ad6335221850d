// Random UUIDs (version 4, RFC 9562) for request ids, made a batch at a time.
//
// Why not crypto.randomUUID: it builds each id by concatenating twenty pieces, and the first
// regular expression to read the result (node:http's check of a header value) must first copy it
// into one flat string. That was about 4,700 machine instructions a request, 5 % of a logged
// GET /todos/1 (callgrind). Here the random bytes of 256 ids are drawn at once from the same
// generator (crypto.randomFillSync), written out as text in one buffer and turned into one string,
// and each id is a 36-character slice of it, which V8 reads without a copy.
import { Buffer } from 'node:buffer';
import { randomFillSync } from 'node:crypto';

const UUID_BYTES = 16;
const UUID_LENGTH = 36;
export const UUIDS_PER_BATCH = 256;

const HEX_DIGITS = '0123456789abcdef';
/** The two hex digits of each byte value as one 16-bit store: the high digit's code in the low byte (little-endian). */
const HEX_PAIRS = Uint16Array.from(
  { length: 256 },
  (_, byte) => HEX_DIGITS.charCodeAt(byte >> 4) | (HEX_DIGITS.charCodeAt(byte & 15) << 8),
);
const DASH = 0x2d;
/**
 * The UUIDs made of `random` (16 bytes each), as one string, 36 characters each, in the text form
 * `xxxxxxxx-xxxx-4xxx-Nxxx-xxxxxxxxxxxx`: the version (4) and variant (10xx) bits replace the
 * random bits they stand on, as RFC 9562 asks of a random UUID. Each byte's two digits are one
 * 16-bit store (a DataView takes them at odd offsets too, which follow a dash), written at fixed
 * offsets (the six after the last dash by a short loop of their own): a loop over a table of
 * offsets cost about 800 machine instructions an id, this about 600 (callgrind).
 */
export function uuidsText(random: Uint8Array): string {
  const count = Math.floor(random.length / UUID_BYTES);
  const text = Buffer.allocUnsafeSlow(count * UUID_LENGTH);
  const view = new DataView(text.buffer, text.byteOffset, text.length);
  const digits = (at: number, byte: number): void =>
    view.setUint16(at, HEX_PAIRS[byte] as number, true);
  const byteAt = (i: number): number => random[i] as number;
  for (let uuid = 0; uuid < count; uuid++) {
    const f = uuid * UUID_BYTES;
    const t = uuid * UUID_LENGTH;
    digits(t, byteAt(f));
    digits(t + 2, byteAt(f + 1));
    digits(t + 4, byteAt(f + 2));
    digits(t + 6, byteAt(f + 3));
    text[t + 8] = DASH;
    digits(t + 9, byteAt(f + 4));
    digits(t + 11, byteAt(f + 5));
    text[t + 13] = DASH;
    digits(t + 14, (byteAt(f + 6) & 0x0f) | 0x40);
    digits(t + 16, byteAt(f + 7));
    text[t + 18] = DASH;
    digits(t + 19, (byteAt(f + 8) & 0x3f) | 0x80);
    digits(t + 21, byteAt(f + 9));
    text[t + 23] = DASH;
    for (let i = 10; i < UUID_BYTES; i++) digits(t + 4 + 2 * i, byteAt(f + i));
  }
  return text.toString('latin1');
}

const random = Buffer.allocUnsafeSlow(UUID_BYTES * UUIDS_PER_BATCH);
let batch = '';
let taken = UUIDS_PER_BATCH;

/** A fresh random UUID, unique across processes as crypto.randomUUID's are (122 random bits). */
export function randomUuid(): string {
  if (taken === UUIDS_PER_BATCH) {
    batch = uuidsText(randomFillSync(random));
    taken = 0;
  }
  const start = taken++ * UUID_LENGTH;
  return batch.slice(start, start + UUID_LENGTH);
}
