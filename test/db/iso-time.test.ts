// The journal's time, formatted by us: the text SQLite's column default wrote, made again only when
// the millisecond changes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { isoMilliseconds } from '../../src/db/iso-time.js';

test("the time is the text strftime('%Y-%m-%dT%H:%M:%fZ') writes for the same millisecond", () => {
  const db = new Database(':memory:');
  try {
    const strftime = db
      .prepare<[number], string>("SELECT strftime('%Y-%m-%dT%H:%M:%fZ', ? / 1000.0, 'unixepoch')")
      .pluck(true);
    for (const ms of [
      0, 1_795_628_441_227, 1_795_628_441_001, 1_795_628_441_999, 951_782_400_000,
    ]) {
      assert.equal(isoMilliseconds(() => ms)(), strftime.get(ms));
    }
  } finally {
    db.close();
  }
});

test('the time follows the clock: a later millisecond gives a new text, the same one the same text', () => {
  let ms = 1_795_628_441_227;
  const now = isoMilliseconds(() => ms);
  assert.equal(now(), '2026-11-25T17:40:41.227Z');
  assert.equal(now(), '2026-11-25T17:40:41.227Z');
  ms += 1;
  assert.equal(now(), '2026-11-25T17:40:41.228Z');
});
