// A keyed write's share of a PostgreSQL group-commit batch's byte bound
// (src/db/postgres/idempotency.ts): its key and fingerprint travel with it (to the claim and to the
// record), so they count. Keys are at most 255 characters, so no request-level test reaches the 4
// MiB bound through keys alone.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { entrySize, type BatchEntry } from '../../src/db/postgres/idempotency.js';

const sizeOf = entrySize<string>((op) => op.length);

describe("a keyed write's share of a batch's byte bound", () => {
  test('an unkeyed write counts its own size only', () => {
    assert.equal(sizeOf({ op: 'withdraw' }), 8);
  });

  test('a keyed write adds its key, its fingerprint and 16 bytes for the times sent with them', () => {
    const entry: BatchEntry<string> = {
      op: 'withdraw',
      key: {
        key: 'k'.repeat(255),
        fingerprint: 'POST /withdraw/alice/10',
        nowMs: 0,
        expiredBeforeMs: 0,
      },
    };
    assert.equal(sizeOf(entry), 8 + 255 + 'POST /withdraw/alice/10'.length + 16);
  });
});
