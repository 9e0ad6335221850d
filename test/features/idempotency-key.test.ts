// The Idempotency-Key header as the draft writes it (a structured-field string) and as Stripe's
// clients send it (bare): which values name which key, and which are refused.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  IDEMPOTENCY_KEY_PATTERN,
  parseIdempotencyKey,
} from '../../src/features/idempotency/key.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

describe('Idempotency-Key values', { timeout: SUITE_TIMEOUT_MS }, () => {
  test('a structured-field string names the key between its quotes', () => {
    assert.equal(
      parseIdempotencyKey(['"8e03978e-40d5-43e8-bc93-6894a57f9324"']),
      '8e03978e-40d5-43e8-bc93-6894a57f9324',
    );
  });

  test("the value's edges are trimmed before it is read, as a field value's whitespace is not part of it", () => {
    assert.deepEqual(
      [parseIdempotencyKey([' "a b" ']), parseIdempotencyKey(['\tkey-1 '])],
      ['a b', 'key-1'],
    );
  });

  test('the bare form names the same key as the quoted one', () => {
    assert.equal(
      parseIdempotencyKey(['8e03978e-40d5-43e8-bc93-6894a57f9324']),
      '8e03978e-40d5-43e8-bc93-6894a57f9324',
    );
  });

  test('escapes \\" and \\\\ inside a quoted key are its characters', () => {
    assert.equal(parseIdempotencyKey(['"a\\"b\\\\c"']), 'a"b\\c');
  });

  test('1 and 255 characters are the bounds', () => {
    assert.equal(parseIdempotencyKey(['k']), 'k');
    assert.equal(parseIdempotencyKey([`"${'k'.repeat(255)}"`]), 'k'.repeat(255));
    assert.equal(parseIdempotencyKey(['k'.repeat(256)]), undefined);
    assert.equal(parseIdempotencyKey([`"${'k'.repeat(256)}"`]), undefined);
  });

  test('empty, unterminated, trailing text, parameters, stray escapes and non-ASCII are refused', () => {
    for (const value of [
      '',
      '""',
      '"abc',
      '"a"b',
      '"abc";p=1',
      '"a\\qb"',
      'caf\u00e9',
      '"caf\u00e9"',
      'tab\there',
    ]) {
      assert.equal(parseIdempotencyKey([value]), undefined, JSON.stringify(value));
    }
  });

  test('two Idempotency-Key fields in one request are refused as ambiguous', () => {
    assert.equal(parseIdempotencyKey(['a', 'b']), undefined);
    assert.equal(parseIdempotencyKey(['a', 'a']), undefined);
  });

  test('a comma anywhere in the line is refused like two fields, bare or quoted: a proxy may fold two lines into one', () => {
    for (const value of ['a, b', 'a,b', '"a", "b"', '"a,b"', ',', 'key,']) {
      assert.equal(parseIdempotencyKey([value]), undefined, JSON.stringify(value));
    }
  });

  test("the documents' pattern admits exactly the values the parser accepts", () => {
    const pattern = new RegExp(IDEMPOTENCY_KEY_PATTERN);
    const alphabet = ['k', ' ', '"', '\\', ',', '\u00e9', '\t', '~', '!'];
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % n;
    };
    const values = [
      'k',
      'k'.repeat(255),
      'k'.repeat(256),
      `"${'k'.repeat(255)}"`,
      `"${'k'.repeat(256)}"`,
      `"${'\\"'.repeat(255)}"`,
      '""',
      '"',
      'a"b',
      '"a\\qb"',
    ];
    for (let i = 0; i < 20_000; i++) {
      const length = random(8) === 0 ? 250 + random(10) : random(8);
      const body = Array.from({ length }, () => alphabet[random(alphabet.length)] as string).join(
        '',
      );
      values.push(random(2) === 0 ? `"${body}"` : body);
    }
    // Node hands a field value over without the whitespace at its edges.
    for (const value of values.map((v) => v.trim())) {
      assert.equal(
        pattern.test(value),
        parseIdempotencyKey([value]) !== undefined,
        JSON.stringify(value),
      );
    }
  });
});
