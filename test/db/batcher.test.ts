// The group-commit queue shared by both databases: what arrives together leaves together, within
// the bounds, each operation answered with its own outcome, and nothing answered before its batch.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Batcher, type Settled } from '../../src/db/batcher.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';
import { UNBOUNDED_WORK } from '../../src/common/work.js';

/** A runner that records every batch and answers each op with itself doubled, or an error for a negative op. */
function recordingRunner(): {
  batches: number[][];
  run: (ops: readonly number[]) => Promise<readonly Settled<number>[]>;
} {
  const batches: number[][] = [];
  return {
    batches,
    run(ops) {
      batches.push([...ops]);
      return Promise.resolve(
        ops.map((op) =>
          op < 0
            ? { ok: false, error: new Error(`op ${op} failed`) }
            : { ok: true, outcome: op * 2 },
        ),
      );
    },
  };
}

const limits = { opsMax: 100, bytesMax: 1000, inFlightMax: 1, sizeOf: () => 1 };

describe('Batcher', { timeout: SUITE_TIMEOUT_MS }, () => {
  test('operations asked in one turn share one batch, in the order asked, each with its own outcome', async () => {
    const runner = recordingRunner();
    const batcher = new Batcher(runner.run, limits);
    const settled = await Promise.allSettled(
      [1, 2, -3, 4].map((op) => batcher.submit(op, UNBOUNDED_WORK)),
    );
    assert.deepEqual(runner.batches, [[1, 2, -3, 4]]);
    assert.deepEqual(
      settled.map((s) => (s.status === 'fulfilled' ? s.value : String(s.reason))),
      [2, 4, 'Error: op -3 failed', 8],
    );
  });

  test('a batch holds at most opsMax operations', async () => {
    const runner = recordingRunner();
    const batcher = new Batcher(runner.run, { ...limits, opsMax: 40 });
    await Promise.all(Array.from({ length: 100 }, (_, i) => batcher.submit(i, UNBOUNDED_WORK)));
    assert.deepEqual(
      runner.batches.map((b) => b.length),
      [40, 40, 20],
    );
    assert.deepEqual(
      runner.batches.flat(),
      Array.from({ length: 100 }, (_, i) => i),
    );
  });

  test('a batch holds at most bytesMax bytes, and an operation larger than that goes alone', async () => {
    const runner = recordingRunner();
    const batcher = new Batcher(runner.run, {
      ...limits,
      bytesMax: 10,
      sizeOf: (op: number) => op,
    });
    await Promise.all([3, 3, 3, 3, 50, 2].map((op) => batcher.submit(op, UNBOUNDED_WORK)));
    assert.deepEqual(runner.batches, [[3, 3, 3], [3], [50], [2]]);
  });

  test('while a batch is out, new operations gather for the next one; none is answered before its batch', async () => {
    let release: (() => void) | undefined;
    const batches: number[][] = [];
    const batcher = new Batcher<number, number>(async (ops) => {
      batches.push([...ops]);
      if (batches.length === 1) await new Promise<void>((resolve) => (release = resolve));
      return ops.map((op) => ({ ok: true, outcome: op }));
    }, limits);
    let firstAnswered = false;
    const first = batcher.submit(1, UNBOUNDED_WORK).then((v) => ((firstAnswered = true), v));
    await new Promise((resolve) => setImmediate(resolve));
    const later = [2, 3].map((op) => batcher.submit(op, UNBOUNDED_WORK));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(batches, [[1]], 'the second batch waits for the first');
    assert.equal(firstAnswered, false, 'not answered before its batch');
    release?.();
    assert.deepEqual(await Promise.all([first, ...later]), [1, 2, 3]);
    assert.deepEqual(batches, [[1], [2, 3]]);
  });

  test('a batch that fails fails every operation in it; the next batch is tried', async () => {
    let calls = 0;
    const batcher = new Batcher<number, number>((ops) => {
      calls += 1;
      if (calls === 1) return Promise.reject(new Error('not committed'));
      return Promise.resolve(ops.map((op) => ({ ok: true, outcome: op })));
    }, limits);
    const failed = await Promise.allSettled([1, 2].map((op) => batcher.submit(op, UNBOUNDED_WORK)));
    assert.deepEqual(
      failed.map((s) => s.status),
      ['rejected', 'rejected'],
    );
    assert.equal(await batcher.submit(3, UNBOUNDED_WORK), 3);
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
    const first = batcher.submit(1, UNBOUNDED_WORK);
    await new Promise((resolve) => setImmediate(resolve));
    const queued = batcher.submit(2, UNBOUNDED_WORK);
    const settled = await Promise.allSettled([first, queued]);
    assert.deepEqual(
      settled.map((s) => s.status),
      ['rejected', 'rejected'],
    );
    assert.deepEqual(tried, [[1]]);
  });

  test('close() answers everything asked before it, then refuses new operations', async () => {
    const runner = recordingRunner();
    const batcher = new Batcher(runner.run, limits);
    const pending = [1, 2, 3].map((op) => batcher.submit(op, UNBOUNDED_WORK));
    await batcher.close();
    assert.deepEqual(await Promise.all(pending), [2, 4, 6]);
    await assert.rejects(batcher.submit(4, UNBOUNDED_WORK), /closed/);
  });

  test('a batch may fill bytesMax exactly', async () => {
    const runner = recordingRunner();
    const batcher = new Batcher(runner.run, {
      ...limits,
      bytesMax: 10,
      sizeOf: (op: number) => op,
    });
    await Promise.all([5, 5, 1].map((op) => batcher.submit(op, UNBOUNDED_WORK)));
    assert.deepEqual(runner.batches, [[5, 5], [1]]);
  });

  test('with inFlightMax 2 a second batch goes while the first is out, and a third waits for one of them', async () => {
    const held = heldRunner();
    const batcher = new Batcher(held.run, { ...limits, inFlightMax: 2 });
    const answers = [batcher.submit(1, UNBOUNDED_WORK)];
    await turn();
    answers.push(batcher.submit(2, UNBOUNDED_WORK));
    await turn();
    answers.push(batcher.submit(3, UNBOUNDED_WORK));
    await turn();
    assert.deepEqual(held.batches, [[1], [2]], 'two out at once; the third waits');
    held.release(0);
    await turn();
    await turn();
    assert.deepEqual(held.batches, [[1], [2], [3]], 'the third goes once a slot is free');
    held.release(1);
    held.release(2);
    assert.deepEqual(await Promise.all(answers), [1, 2, 3]);
  });

  test('operations asked in one turn beyond one batch wait for a free slot: never more than inFlightMax batches out', async () => {
    const held = heldRunner();
    const batcher = new Batcher(held.run, { ...limits, opsMax: 2, inFlightMax: 1 });
    const answers = [1, 2, 3, 4, 5].map((op) => batcher.submit(op, UNBOUNDED_WORK));
    for (let k = 0; k < 5; k++) await turn();
    assert.deepEqual(held.batches, [[1, 2]], 'one batch out; the rest wait');
    for (let batch = 0; batch < 3; batch++) {
      held.release(batch);
      for (let k = 0; k < 3; k++) await turn();
    }
    assert.deepEqual(held.batches, [[1, 2], [3, 4], [5]]);
    assert.deepEqual(await Promise.all(answers), [1, 2, 3, 4, 5]);
  });

  test('the queue depth an observer reads counts the operations queued and those in batches not yet answered', async () => {
    const held = heldRunner();
    let depth: () => number = () => NaN;
    const batcher = new Batcher(held.run, {
      ...limits,
      observer: { watchWriteQueue: (read) => (depth = read) },
    });
    const answers = [1, 2, 3].map((op) => batcher.submit(op, UNBOUNDED_WORK));
    assert.equal(depth(), 3, 'queued');
    await turn();
    answers.push(batcher.submit(4, UNBOUNDED_WORK), batcher.submit(5, UNBOUNDED_WORK));
    assert.equal(depth(), 5, 'three in the batch out, two queued');
    held.release(0);
    await Promise.all(answers.slice(0, 3));
    assert.equal(depth(), 2);
    await turn();
    held.release(1);
    await Promise.all(answers);
    assert.equal(depth(), 0);
  });

  test('each committed batch is told to the observer with its size and its commit time in seconds; a failed one is not', async () => {
    const told: [number, number][] = [];
    let calls = 0;
    const batcher = new Batcher<number, number>(
      async (ops) => {
        calls += 1;
        await new Promise((resolve) => setTimeout(resolve, 30));
        if (calls === 2) throw new Error('not committed');
        return ops.map((op) => ({ ok: true, outcome: op }));
      },
      {
        ...limits,
        observer: { batchCommitted: (writes, seconds) => told.push([writes, seconds]) },
      },
    );
    await Promise.all([1, 2].map((op) => batcher.submit(op, UNBOUNDED_WORK)));
    await assert.rejects(batcher.submit(3, UNBOUNDED_WORK));
    assert.equal(told.length, 1);
    const [writes, seconds] = told[0] as [number, number];
    assert.equal(writes, 2);
    assert.ok(
      seconds >= 0.025 && seconds < 1,
      `a commit of about 30 ms told in seconds, not ${seconds}`,
    );
  });

  test("a batch sent while another was out is timed from that one's answer: its wait before is queueing, not committing", async () => {
    const told: number[] = [];
    const held = heldRunner();
    const batcher = new Batcher(held.run, {
      ...limits,
      inFlightMax: 2,
      observer: { batchCommitted: (_writes, seconds) => told.push(seconds) },
    });
    const first = batcher.submit(1, UNBOUNDED_WORK);
    await turn();
    const second = batcher.submit(2, UNBOUNDED_WORK);
    await turn();
    await new Promise((resolve) => setTimeout(resolve, 100));
    held.release(0);
    await first;
    held.release(1);
    await second;
    assert.equal(told.length, 2);
    assert.ok((told[0] as number) >= 0.09, 'the first: from its sending');
    assert.ok(
      (told[1] as number) < 0.06,
      `the second: from the first's answer, not from its sending 100 ms before (${told[1]})`,
    );
  });

  test('the commit hook runs before any operation of the batch is answered', async () => {
    const order: string[] = [];
    const runner = recordingRunner();
    const batcher = new Batcher(runner.run, {
      ...limits,
      onCommitted: () => order.push('committed'),
    });
    await Promise.all(
      [1, 2].map((op) =>
        batcher.submit(op, UNBOUNDED_WORK).then(() => order.push(`answered ${op}`)),
      ),
    );
    assert.deepEqual(order, ['committed', 'answered 1', 'answered 2']);
  });

  test('a runner that answers another number of results than it was given fails the whole batch, and says so', async () => {
    const batcher = new Batcher<number, number>(
      () => Promise.resolve([{ ok: true, outcome: 0 }]),
      limits,
    );
    const settled = await Promise.allSettled(
      [1, 2].map((op) => batcher.submit(op, UNBOUNDED_WORK)),
    );
    assert.deepEqual(
      settled.map((s) => (s.status === 'rejected' ? String(s.reason) : 'answered')),
      [
        'Error: the database answered 1 of 2 operations',
        'Error: the database answered 1 of 2 operations',
      ],
    );
  });

  test('a runner that throws at once fails its batch like one that rejects, and the next batch is tried', async () => {
    let calls = 0;
    const batcher = new Batcher<number, number>((ops) => {
      calls += 1;
      if (calls === 1) throw new Error('could not send');
      return Promise.resolve(ops.map((op) => ({ ok: true, outcome: op })));
    }, limits);
    await assert.rejects(batcher.submit(1, UNBOUNDED_WORK), /could not send/);
    assert.equal(await batcher.submit(2, UNBOUNDED_WORK), 2);
  });

  test('a failure the queue would not meet leaves what is queued to be tried', async () => {
    const tried: number[][] = [];
    const batcher = new Batcher<number, number>(
      async (ops) => {
        tried.push([...ops]);
        await turn();
        if (tried.length === 1) throw new Error('this batch only');
        return ops.map((op) => ({ ok: true, outcome: op }));
      },
      { ...limits, failsQueued: (error) => error.message === 'database gone' },
    );
    const first = batcher.submit(1, UNBOUNDED_WORK);
    await turn();
    const queued = batcher.submit(2, UNBOUNDED_WORK);
    await assert.rejects(first, /this batch only/);
    assert.equal(await queued, 2);
    assert.deepEqual(tried, [[1], [2]]);
  });

  test('drain() resolves at once when nothing is pending, and otherwise once the last batch is answered', async () => {
    const held = heldRunner();
    const batcher = new Batcher(held.run, limits);
    await batcher.drain();
    const answers = [batcher.submit(1, UNBOUNDED_WORK)];
    await turn();
    answers.push(batcher.submit(2, UNBOUNDED_WORK));
    let drained = false;
    const draining = batcher.drain().then(() => (drained = true));
    held.release(0);
    await answers[0];
    await turn();
    assert.equal(drained, false, 'the first batch is answered, the second is out');
    held.release(1);
    await draining;
    assert.deepEqual(await Promise.all(answers), [1, 2]);
  });

  test('operations abandoned before their batch was sent are never sent: no empty batch reaches the runner', async () => {
    const runner = recordingRunner();
    const batcher = new Batcher(runner.run, limits);
    const abandoned = batcher.submit(1, UNBOUNDED_WORK);
    batcher.abandonQueued(new Error('database gone'));
    await assert.rejects(abandoned, /database gone/);
    await turn();
    assert.deepEqual(runner.batches, []);
    assert.equal(await batcher.submit(2, UNBOUNDED_WORK), 4);
  });

  test('a carrier takes what is queued through its own runner, answered as a batch of the carried batcher', async () => {
    const own = recordingRunner();
    const carrier = recordingRunner();
    const batcher = new Batcher(own.run, { ...limits, carried: NO_CARRIER });
    const asked = [1, 2, -3].map((op) => batcher.submit(op, UNBOUNDED_WORK));
    assert.equal(batcher.sendThrough(carrier.run), true);
    const settled = await Promise.allSettled(asked);
    assert.deepEqual(carrier.batches, [[1, 2, -3]]);
    assert.deepEqual(own.batches, []);
    assert.deepEqual(
      settled.map((s) => (s.status === 'fulfilled' ? s.value : String(s.reason))),
      [2, 4, 'Error: op -3 failed'],
    );
    assert.equal(batcher.sendThrough(carrier.run), false, 'nothing is queued any more');
  });

  test('a carrier takes nothing while every slot of the carried batcher is out', async () => {
    const held = heldRunner();
    const batcher = new Batcher(held.run, { ...limits, carried: NO_CARRIER });
    const first = batcher.submit(1, UNBOUNDED_WORK);
    await turn();
    await turn();
    const second = batcher.submit(2, UNBOUNDED_WORK);
    const carrier = recordingRunner();
    assert.equal(batcher.sendThrough(carrier.run), false);
    held.release(0);
    assert.equal(await first, 1);
    await turn();
    await turn();
    held.release(1);
    assert.equal(await second, 2);
    assert.deepEqual(held.batches, [[1], [2]]);
    assert.deepEqual(carrier.batches, []);
  });

  test('a carried batcher leaves a turn later than it would alone, so that a carrier asked in the same turn takes it', async () => {
    const own = recordingRunner();
    const carrier = recordingRunner();
    const batcher = new Batcher(own.run, { ...limits, carried: NO_CARRIER });
    const asked = batcher.submit(1, UNBOUNDED_WORK);
    // A carrier's batch asked after it in this turn leaves at the end of the turn, as a batcher's does.
    setImmediate(() => batcher.sendThrough(carrier.run));
    assert.equal(await asked, 2);
    assert.deepEqual(carrier.batches, [[1]]);
    assert.deepEqual(own.batches, []);
  });

  test('with no carrier, a carried batcher sends alone a turn later', async () => {
    const own = recordingRunner();
    const batcher = new Batcher(own.run, { ...limits, carried: NO_CARRIER });
    assert.equal(await batcher.submit(1, UNBOUNDED_WORK), 2);
    assert.deepEqual(own.batches, [[1]]);
  });

  test('while a carrier has work queued, a carried batcher waits for it, and leaves alone after waitMs', async () => {
    const own = recordingRunner();
    let carrierQueued = true;
    const batcher = new Batcher(own.run, {
      ...limits,
      carried: { waiting: () => carrierQueued, waitMs: 30 },
    });
    const startedMs = performance.now();
    const asked = batcher.submit(1, UNBOUNDED_WORK);
    for (let i = 0; i < 5; i++) await turn();
    assert.deepEqual(own.batches, [], 'it waits for the carrier');
    assert.equal(await asked, 2);
    assert.ok(performance.now() - startedMs >= 25, 'it left alone once waitMs had passed');
    // The carrier leaving takes the queue; what is asked after waits for the next carrier afresh.
    const carrier = recordingRunner();
    const carried = batcher.submit(3, UNBOUNDED_WORK);
    for (let i = 0; i < 3; i++) await turn();
    assert.equal(batcher.sendThrough(carrier.run), true);
    assert.equal(await carried, 6);
    carrierQueued = false;
    assert.equal(await batcher.submit(4, UNBOUNDED_WORK), 8);
    assert.deepEqual(own.batches, [[1], [4]]);
    assert.deepEqual(carrier.batches, [[3]]);
  });
});

/** A carried batcher's carrier that never has work queued. */
const NO_CARRIER = { waiting: (): boolean => false, waitMs: 0 };

/** One turn of the event loop: what was asked in this one is sent. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A runner whose batches wait until the test releases them, by their number in sending order. */
function heldRunner(): {
  batches: number[][];
  run: (ops: readonly number[]) => Promise<readonly Settled<number>[]>;
  release: (batch: number) => void;
} {
  const batches: number[][] = [];
  const releases: (() => void)[] = [];
  return {
    batches,
    run: (ops) => {
      batches.push([...ops]);
      return new Promise((resolve) =>
        releases.push(() => resolve(ops.map((op) => ({ ok: true, outcome: op })))),
      );
    },
    release: (batch) => releases[batch]?.(),
  };
}
