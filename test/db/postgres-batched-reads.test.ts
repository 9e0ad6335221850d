// Point reads on PostgreSQL that arrive together share one query (src/db/postgres-batched-reads.ts),
// here with a scripted lookup in place of the query: what one lookup is asked, how many are out at
// once, and what closing waits for. The same reads against a real server are in the store tests.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { batchedReads } from '../../src/db/postgres-batched-reads.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A lookup of even keys (each maps to ten times itself) whose answers wait until released. */
function heldLookup() {
  const asked: number[][] = [];
  const releases: (() => void)[] = [];
  const lookup = (keys: readonly number[]): Promise<ReadonlyMap<number, number>> => {
    asked.push([...keys]);
    return new Promise((resolve) => releases.push(() => resolve(new Map(keys.filter((k) => k % 2 === 0).map((k) => [k, k * 10])))));
  };
  const releaseAll = async (): Promise<void> => {
    for (let k = 0; k < 20; k++) {
      releases.splice(0).forEach((release) => release());
      await turn();
    }
  };
  return { asked, lookup, releaseAll };
}

describe('batched point reads on PostgreSQL', { timeout: SUITE_TIMEOUT_MS }, () => {
  test('reads asked in one turn share one lookup that names each key once; a key without a row reads as undefined', async () => {
    const held = heldLookup();
    const reads = batchedReads(held.lookup, () => 8);
    const answers = Promise.all([2, 3, 2, 4].map((key) => reads.read(key)));
    await turn();
    await held.releaseAll();
    assert.deepEqual(await answers, [20, undefined, 20, 40]);
    assert.deepEqual(held.asked, [[2, 3, 4]]);
    await reads.close();
  });

  test('one lookup names at most 512 keys', async () => {
    const held = heldLookup();
    const reads = batchedReads(held.lookup, () => 8);
    const answers = Promise.all(Array.from({ length: 513 }, (_, key) => reads.read(key)));
    await turn();
    await held.releaseAll();
    await answers;
    assert.deepEqual(held.asked.map((keys) => keys.length), [512, 1]);
    await reads.close();
  });

  test('at most four lookups are out at once, leaving the rest of the pool to writes and readiness', async () => {
    const held = heldLookup();
    const reads = batchedReads(held.lookup, () => 8);
    const answers: Promise<number | undefined>[] = [];
    for (let key = 0; key < 6; key++) {
      answers.push(reads.read(key));
      await turn();
      await turn();
    }
    assert.equal(held.asked.length, 4, 'four out; the later reads wait');
    await held.releaseAll();
    assert.deepEqual(await Promise.all(answers), [0, undefined, 20, undefined, 40, undefined]);
    assert.deepEqual(held.asked.flat(), [0, 1, 2, 3, 4, 5]);
    await reads.close();
  });

  test('close() answers every read asked before it, then refuses new ones', async () => {
    const held = heldLookup();
    const reads = batchedReads(held.lookup, () => 8);
    const before = reads.read(2);
    let closed = false;
    const closing = reads.close().then(() => (closed = true));
    await turn();
    assert.equal(closed, false, 'not closed while a read is out');
    await held.releaseAll();
    assert.equal(await before, 20);
    await closing;
    await assert.rejects(reads.read(4), /closed/);
  });
});
