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
const HEX_PAIRS = Uint16Array.from({ length: 256 }, (_, byte) => HEX_DIGITS.charCodeAt(byte >> 4) | (HEX_DIGITS.charCodeAt(byte & 15) << 8));
const DASH = 0x2d;
/** Where each of a UUID's 16 bytes is written in its 36 characters (a dash follows bytes 3, 5, 7 and 9). */
const DIGITS_AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34] as const;

/**
 * The UUIDs made of `random` (16 bytes each), as one string, 36 characters each, in the text form
 * `xxxxxxxx-xxxx-4xxx-Nxxx-xxxxxxxxxxxx`: the version (4) and variant (10xx) bits replace the
 * random bits they stand on, as RFC 9562 asks of a random UUID. Each byte's two digits are one
 * 16-bit store (a DataView takes them at odd offsets too, which follow a dash).
 */
export function uuidsText(random: Uint8Array): string {
  const count = Math.floor(random.length / UUID_BYTES);
  const text = Buffer.allocUnsafeSlow(count * UUID_LENGTH);
  const view = new DataView(text.buffer, text.byteOffset, text.length);
  for (let uuid = 0; uuid < count; uuid++) {
    const from = uuid * UUID_BYTES;
    const to = uuid * UUID_LENGTH;
    for (let i = 0; i < UUID_BYTES; i++) view.setUint16(to + (DIGITS_AT[i] as number), HEX_PAIRS[random[from + i] as number] as number, true);
    view.setUint16(to + 14, HEX_PAIRS[((random[from + 6] as number) & 0x0f) | 0x40] as number, true);
    view.setUint16(to + 19, HEX_PAIRS[((random[from + 8] as number) & 0x3f) | 0x80] as number, true);
    text[to + 8] = DASH;
    text[to + 13] = DASH;
    text[to + 18] = DASH;
    text[to + 23] = DASH;
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
