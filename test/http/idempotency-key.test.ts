// The Idempotency-Key header as the draft writes it (a structured-field string) and as Stripe's
// clients send it (bare): which values name which key, and which are refused.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseIdempotencyKey } from '../../src/http/idempotency-key.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

describe('Idempotency-Key values', { timeout: SUITE_TIMEOUT_MS }, () => {
  test('a structured-field string names the key between its quotes', () => {
    assert.equal(parseIdempotencyKey(['"8e03978e-40d5-43e8-bc93-6894a57f9324"']), '8e03978e-40d5-43e8-bc93-6894a57f9324');
  });

  test("the value's edges are trimmed before it is read, as a field value's whitespace is not part of it", () => {
    assert.deepEqual([parseIdempotencyKey([' "a b" ']), parseIdempotencyKey(['\tkey-1 '])], ['a b', 'key-1']);
  });

  test('the bare form names the same key as the quoted one', () => {
    assert.equal(parseIdempotencyKey(['8e03978e-40d5-43e8-bc93-6894a57f9324']), '8e03978e-40d5-43e8-bc93-6894a57f9324');
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
    for (const value of ['', '""', '"abc', '"a"b', '"abc";p=1', '"a\\qb"', 'caf\u00e9', '"caf\u00e9"', 'tab\there']) {
      assert.equal(parseIdempotencyKey([value]), undefined, JSON.stringify(value));
    }
  });

  test('two Idempotency-Key fields in one request are refused as ambiguous', () => {
    assert.equal(parseIdempotencyKey(['a', 'b']), undefined);
    assert.equal(parseIdempotencyKey(['a', 'a']), undefined);
  });
});
