// The generated request ids: random UUIDs of version 4, in their text form, each used once.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { randomUuid, UUIDS_PER_BATCH, uuidsText } from '../../src/http/random-uuids.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The text of the UUID made of 16 bytes, written the plain way: version and variant set, then hex and dashes. */
function referenceText(bytes: Uint8Array): string {
  const copy = Buffer.from(bytes);
  copy[6] = ((copy[6] as number) & 0x0f) | 0x40;
  copy[8] = ((copy[8] as number) & 0x3f) | 0x80;
  const hex = copy.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

describe('random UUIDs', () => {
  test('each 16 random bytes are written as the UUID they make, version 4 and variant 10 in place of their bits', () => {
    const random = randomBytes(16 * 64);
    const text = uuidsText(random);
    assert.equal(text.length, 36 * 64);
    for (let i = 0; i < 64; i++) {
      assert.equal(
        text.slice(i * 36, i * 36 + 36),
        referenceText(random.subarray(i * 16, i * 16 + 16)),
      );
    }
  });

  test('every byte value is written as its two hex digits, in every position', () => {
    for (let value = 0; value < 256; value++) {
      const bytes = new Uint8Array(16).fill(value);
      assert.equal(uuidsText(bytes), referenceText(bytes), `byte ${value}`);
    }
    assert.equal(
      uuidsText(Uint8Array.from({ length: 16 }, (_, i) => i)),
      '00010203-0405-4607-8809-0a0b0c0d0e0f',
    );
    assert.equal(uuidsText(new Uint8Array(16).fill(255)), 'ffffffff-ffff-4fff-bfff-ffffffffffff');
  });

  test('randomUuid gives version 4 UUIDs, all different, across several batches', () => {
    const seen = new Set<string>();
    const count = UUIDS_PER_BATCH * 4 + 7;
    for (let i = 0; i < count; i++) {
      const id = randomUuid();
      assert.match(id, UUID_V4);
      seen.add(id);
    }
    assert.equal(seen.size, count);
  });

  test('the bits that are not fixed vary: each of the 122 random bits takes both values over 1,024 ids', () => {
    const ones = new Array<number>(32).fill(0);
    const ids = Array.from({ length: 1024 }, () => randomUuid().replaceAll('-', ''));
    for (const id of ids)
      for (let digit = 0; digit < 32; digit++)
        ones[digit] = (ones[digit] as number) | parseInt(id[digit] as string, 16);
    const zeros = new Array<number>(32).fill(0);
    for (const id of ids)
      for (let digit = 0; digit < 32; digit++)
        zeros[digit] = (zeros[digit] as number) | (~parseInt(id[digit] as string, 16) & 15);
    for (let digit = 0; digit < 32; digit++) {
      // Digit 12 is the version (always 4); digit 16 carries the variant in its two high bits.
      const fixed = digit === 12 ? 15 : digit === 16 ? 12 : 0;
      assert.equal(
        (ones[digit] as number) & ~fixed & 15,
        ~fixed & 15,
        `a bit of digit ${digit} is never 1`,
      );
      assert.equal(
        (zeros[digit] as number) & ~fixed & 15,
        ~fixed & 15,
        `a bit of digit ${digit} is never 0`,
      );
    }
  });
});
