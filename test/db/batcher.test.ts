// The group-commit queue shared by both databases: what arrives together leaves together, within
// the bounds, each operation answered with its own outcome, and nothing answered before its batch.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Batcher, type Settled } from '../../src/db/batcher.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

/** A runner that records every batch and answers each op with itself doubled, or an error for a negative op. */
function recordingRunner(): { batches: number[][]; run: (ops: readonly number[]) => Promise<readonly Settled<number>[]> } {
  const batches: number[][] = [];
  return {
    batches,
    async run(ops) {
      batches.push([...ops]);
      return ops.map((op) => (op < 0 ? { ok: false, error: new Error(`op ${op} failed`) } : { ok: true, outcome: op * 2 }));
    },
  };
}

const limits = { opsMax: 100, bytesMax: 1000, inFlightMax: 1, sizeOf: () => 1 };

describe('Batcher', { timeout: SUITE_TIMEOUT_MS }, () => {
  test('operations asked in one turn share one batch, in the order asked, each with its own outcome', async () => {
    const runner = recordingRunner();
    const batcher = new Batcher(runner.run, limits);
    const settled = await Promise.allSettled([1, 2, -3, 4].map((op) => batcher.submit(op)));
    assert.deepEqual(runner.batches, [[1, 2, -3, 4]]);
    assert.deepEqual(settled.map((s) => (s.status === 'fulfilled' ? s.value : String(s.reason))), [2, 4, 'Error: op -3 failed', 8]);
  });

  test('a batch holds at most opsMax operations', async () => {
    const runner = recordingRunner();
    const batcher = new Batcher(runner.run, { ...limits, opsMax: 40 });
    await Promise.all(Array.from({ length: 100 }, (_, i) => batcher.submit(i)));
    assert.deepEqual(runner.batches.map((b) => b.length), [40, 40, 20]);
    assert.deepEqual(runner.batches.flat(), Array.from({ length: 100 }, (_, i) => i));
  });

  test('a batch holds at most bytesMax bytes, and an operation larger than that goes alone', async () => {
    const runner = recordingRunner();
    const batcher = new Batcher(runner.run, { ...limits, bytesMax: 10, sizeOf: (op: number) => op });
    await Promise.all([3, 3, 3, 3, 50, 2].map((op) => batcher.submit(op)));
    assert.deepEqual(runner.batches, [[3, 3, 3], [3], [50], [2]]);
  });

  test('while a batch is out, new operations gather for the next one; none is answered before its batch', async () => {
    let release: (() => void) | undefined;
    const batches: number[][] = [];
    const batcher = new Batcher<number, number>(
      async (ops) => {
        batches.push([...ops]);
        if (batches.length === 1) await new Promise<void>((resolve) => (release = resolve));
        return ops.map((op) => ({ ok: true, outcome: op }));
      },
      limits,
    );
    let firstAnswered = false;
    const first = batcher.submit(1).then((v) => ((firstAnswered = true), v));
    await new Promise((resolve) => setImmediate(resolve));
    const later = [2, 3].map((op) => batcher.submit(op));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(batches, [[1]], 'the second batch waits for the first');
    assert.equal(firstAnswered, false, 'not answered before its batch');
    release?.();
    assert.deepEqual(await Promise.all([first, ...later]), [1, 2, 3]);
    assert.deepEqual(batches, [[1], [2, 3]]);
  });

  test('a batch that fails fails every operation in it; the next batch is tried', async () => {
    let calls = 0;
    const batcher = new Batcher<number, number>(async (ops) => {
      calls += 1;
      if (calls === 1) throw new Error('not committed');
      return ops.map((op) => ({ ok: true, outcome: op }));
    }, limits);
    const failed = await Promise.allSettled([1, 2].map((op) => batcher.submit(op)));
    assert.deepEqual(failed.map((s) => s.status), ['rejected', 'rejected']);
    assert.equal(await batcher.submit(3), 3);
  });

  test('a failure the queue would meet too fails what is queued at once, untried', async () => {
    const tried: number[][] = [];
    const batcher = new Batcher<number, number>(
      async (ops) => {
        tried.push([...ops]);
        await new Promise((resolve) => setImmediate(resolve));
        throw new Error('database gone');
      },
      { ...limits, failsQueued: (error) => error.message === 'database gone' },
    );
    const first = batcher.submit(1);
    await new Promise((resolve) => setImmediate(resolve));
    const queued = batcher.submit(2);
    const settled = await Promise.allSettled([first, queued]);
    assert.deepEqual(settled.map((s) => s.status), ['rejected', 'rejected']);
    assert.deepEqual(tried, [[1]]);
  });

  test('close() answers everything asked before it, then refuses new operations', async () => {
    const runner = recordingRunner();
    const batcher = new Batcher(runner.run, limits);
    const pending = [1, 2, 3].map((op) => batcher.submit(op));
    await batcher.close();
    assert.deepEqual(await Promise.all(pending), [2, 4, 6]);
    await assert.rejects(batcher.submit(4), /closed/);
  });
});
