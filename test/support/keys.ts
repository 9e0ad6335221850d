// Idempotency keys as a store receives them, and the promises every store keeps about their records
// (src/db/idempotency-records.ts), checked the same way for the ledger and the to-do store.
import assert from 'node:assert/strict';
import {
  unkeyedOutcome,
  type KeyedOutcome,
  type KeyedWrite,
} from '../../src/common/keyed-writes.js';

/** A keyed write under `key` (its fingerprint `fp-<key>`), at `nowMs`; records from before `expiredBeforeMs` are expired. */
export const keyedWrite = (key: string, nowMs: number, expiredBeforeMs = 0): KeyedWrite => ({
  key,
  fingerprint: `fp-${key}`,
  nowMs,
  expiredBeforeMs,
});

/** The outcome of a store's write made without a key (it always runs). */
export async function ran<O>(written: Promise<KeyedOutcome<O>>): Promise<O> {
  return unkeyedOutcome(await written);
}

/** A store's keyed write: the same write each time, under the key given. */
export type KeyedRun = (key: KeyedWrite) => Promise<KeyedOutcome<unknown>>;

/** What became of a keyed write and, for a replay, when its record was made. */
const kindAndTime = (outcome: KeyedOutcome<unknown>): [string, number | undefined] => [
  outcome.kind,
  'recordedAtMs' in outcome ? outcome.recordedAtMs : undefined,
];

/** A record from before the bound counts as absent: the write runs again, and its record replaces the old one. */
export async function assertExpiredKeyRunsAgain(run: KeyedRun): Promise<void> {
  assert.deepEqual(kindAndTime(await run(keyedWrite('k', 1_000))), ['ran', undefined]);
  assert.deepEqual(
    kindAndTime(await run(keyedWrite('k', 1_500, 1_000))),
    ['recorded', 1_000],
    'recorded at the bound, the time of the run: still live',
  );
  assert.deepEqual(kindAndTime(await run(keyedWrite('k', 5_000, 2_000))), ['ran', undefined]);
  assert.deepEqual(
    kindAndTime(await run(keyedWrite('k', 6_000, 2_000))),
    ['recorded', 5_000],
    'the record replaced, at the time of the run',
  );
}

/** pruneKeys deletes the records from before its bound, and only those: the others still replay. */
export async function assertPrunesBefore(
  run: KeyedRun,
  pruneKeys: (expiredBeforeMs: number) => Promise<number>,
): Promise<void> {
  for (const [key, at] of [
    ['older', 500],
    ['old', 1_999],
    ['new', 2_000],
    ['newer', 3_000],
  ] as const)
    await run(keyedWrite(key, at));
  assert.equal(await pruneKeys(2_000), 2);
  assert.equal(await pruneKeys(2_000), 0);
  for (const key of ['new', 'newer'])
    assert.equal((await run(keyedWrite(key, 4_000))).kind, 'recorded', key);
  for (const key of ['older', 'old'])
    assert.equal((await run(keyedWrite(key, 4_000))).kind, 'ran', key);
}
