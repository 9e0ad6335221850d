// The replay cache (src/features/idempotency/replay-cache.ts): bounded by the bytes it holds, oldest out
// first, no entry larger than its share, and nothing kept past its key's expiry.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  REPLAY_CACHE_BYTES_MAX,
  REPLAY_ENTRY_BYTES_MAX,
  ReplayCache,
} from '../../src/features/idempotency/replay-cache.js';

const LATER = 1_000;
const NOW = 0;
const FINGERPRINT = 'POST /withdraw/alice/10';

describe('the replay cache', () => {
  test('holds an outcome until its expiry, and not at it', () => {
    const cache = new ReplayCache();
    cache.set('k', FINGERPRINT, { kind: 'done', balance: 90 }, LATER, NOW);
    assert.deepEqual(cache.get('k', LATER - 1)?.outcome, { kind: 'done', balance: 90 });
    assert.equal(cache.get('k', LATER), undefined);
    assert.deepEqual(
      [cache.size, cache.bytes],
      [0, 0],
      'an expired entry is dropped with its bytes',
    );
  });

  test('keeps nothing already expired', () => {
    const cache = new ReplayCache();
    cache.set('k', FINGERPRINT, {}, NOW, NOW);
    assert.equal(cache.size, 0);
  });

  test(`never holds more than its budget (${REPLAY_CACHE_BYTES_MAX} bytes by default): the oldest entries go first`, () => {
    const budget = 64 * 1024;
    const cache = new ReplayCache(budget);
    for (let i = 0; i < 5_000; i++) {
      cache.set(
        `key-${i}`,
        `POST /withdraw/${'a'.repeat(i % 300)}/10`,
        { kind: 'done', balance: i },
        LATER,
        NOW,
      );
      assert.ok(cache.bytes <= budget, `${cache.bytes} bytes after ${i + 1} entries`);
    }
    assert.ok(cache.bytes > budget * 0.9, 'the budget is used, not left empty');
    assert.ok(cache.get('key-4999', NOW) !== undefined, 'the newest is kept');
    assert.equal(cache.get('key-0', NOW), undefined, 'the oldest went first');
    const kept = Array.from({ length: 5_000 }, (_, i) => cache.get(`key-${i}`, NOW) !== undefined);
    assert.deepEqual(
      kept,
      Array.from({ length: 5_000 }, (_, i) => i >= kept.indexOf(true)),
      'what is kept is the newest, with no gap',
    );
  });

  test(`an entry larger than ${REPLAY_ENTRY_BYTES_MAX} bytes is never kept, and evicts nothing`, () => {
    const cache = new ReplayCache();
    cache.set('small', FINGERPRINT, {}, LATER, NOW);
    cache.set(
      'large',
      `POST /withdraw/${'a'.repeat(REPLAY_ENTRY_BYTES_MAX / 2)}/10`,
      {},
      LATER,
      NOW,
    );
    assert.equal(cache.get('large', NOW), undefined);
    assert.ok(cache.get('small', NOW) !== undefined);
  });

  test('a key set again replaces its entry and its bytes', () => {
    const cache = new ReplayCache();
    cache.set('k', FINGERPRINT, { balance: 1 }, LATER, NOW);
    const bytes = cache.bytes;
    cache.set('k', FINGERPRINT, { balance: 2 }, LATER, NOW);
    assert.deepEqual(
      [cache.size, cache.bytes, cache.get('k', NOW)?.outcome],
      [1, bytes, { balance: 2 }],
    );
  });
});
