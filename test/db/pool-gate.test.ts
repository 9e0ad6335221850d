// The wait for a pooled connection: at most `size` turns out at once, the rest served in order, and
// a wait past the bound fails as saturation, with the usage reported to an observer at every
// change.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PoolGate, type PoolUsage } from '../../src/db/postgres/pool-gate.js';
import { isStoreFault } from '../../src/db/store-errors.js';
import { UNBOUNDED_WORK } from '../../src/common/work.js';

test('no more than `size` turns are out at once; the others are granted in the order they asked', async () => {
  const gate = new PoolGate({ size: 2, waitMs: 10_000 });
  const granted: number[] = [];
  const releases = await Promise.all([gate.acquire(UNBOUNDED_WORK), gate.acquire(UNBOUNDED_WORK)]);
  const waiting = [2, 3, 4].map((n) =>
    gate.acquire(UNBOUNDED_WORK).then((release) => (granted.push(n), release)),
  );
  assert.deepEqual(gate.usage, { inUse: 2, waiting: 3, size: 2 });
  releases[0]?.();
  releases[1]?.();
  const [third, fourth] = await Promise.all(waiting.slice(0, 2));
  assert.deepEqual(granted, [2, 3]);
  assert.deepEqual(gate.usage, { inUse: 2, waiting: 1, size: 2 });
  third?.();
  const fifth = await waiting[2];
  fourth?.();
  fifth?.();
  assert.deepEqual(granted, [2, 3, 4]);
  assert.deepEqual(gate.usage, { inUse: 0, waiting: 0, size: 2 });
});

test('a turn given back twice counts once', async () => {
  const gate = new PoolGate({ size: 1, waitMs: 10_000 });
  const release = await gate.acquire(UNBOUNDED_WORK);
  release();
  release();
  assert.deepEqual(gate.usage, { inUse: 0, waiting: 0, size: 1 });
});

test('a wait past waitMs fails as a saturated store, leaves the queue, and the others keep their place', async () => {
  const gate = new PoolGate({ size: 1, waitMs: 20 });
  const release = await gate.acquire(UNBOUNDED_WORK);
  await assert.rejects(
    gate.acquire(UNBOUNDED_WORK),
    (error: unknown) =>
      isStoreFault(error, 'saturated') &&
      error.code === 'STORE_SATURATED' &&
      error.message === 'no pooled connection came free within 20 ms (pool size 1)',
  );
  assert.deepEqual(gate.usage, { inUse: 1, waiting: 0, size: 1 });
  release();
  const again = await gate.acquire(UNBOUNDED_WORK);
  again();
});

test('every wait past waitMs fails, wherever it stands in the queue', async () => {
  const gate = new PoolGate({ size: 1, waitMs: 20 });
  const release = await gate.acquire(UNBOUNDED_WORK);
  const outcomes = await Promise.allSettled([
    gate.acquire(UNBOUNDED_WORK),
    gate.acquire(UNBOUNDED_WORK),
    gate.acquire(UNBOUNDED_WORK),
  ]);
  assert.deepEqual(
    outcomes.map(
      (outcome) => outcome.status === 'rejected' && isStoreFault(outcome.reason, 'saturated'),
    ),
    [true, true, true],
  );
  assert.deepEqual(gate.usage, { inUse: 1, waiting: 0, size: 1 });
  release();
});

test('a wait behind waiters already served fails on time too', async () => {
  const gate = new PoolGate({ size: 1, waitMs: 30 });
  const releaseFirst = await gate.acquire(UNBOUNDED_WORK);
  const second = gate.acquire(UNBOUNDED_WORK);
  const third = gate.acquire(UNBOUNDED_WORK);
  releaseFirst();
  const releaseSecond = await second;
  // The third waiter now stands behind one that was served: its time runs out all the same.
  let timer: NodeJS.Timeout | undefined;
  const stillWaiting = new Promise(
    (resolve) => (timer = setTimeout(() => resolve('still waiting'), 1_000)),
  );
  const outcome = await Promise.race([
    third.then(
      () => 'granted',
      (error: unknown) => error,
    ),
    stillWaiting,
  ]);
  clearTimeout(timer);
  assert.ok(isStoreFault(outcome, 'saturated'), String(outcome));
  assert.deepEqual(gate.usage, { inUse: 1, waiting: 0, size: 1 });
  releaseSecond();
  assert.deepEqual(gate.usage, { inUse: 0, waiting: 0, size: 1 });
});

test('the observer sees every change of usage and each wait', async () => {
  const usages: PoolUsage[] = [];
  const waits: number[] = [];
  const gate = new PoolGate({
    size: 1,
    waitMs: 10_000,
    onUsage: (usage) => usages.push(usage),
    onWaited: (ms) => waits.push(ms),
  });
  const first = await gate.acquire(UNBOUNDED_WORK);
  const second = gate.acquire(UNBOUNDED_WORK);
  first();
  (await second)();
  assert.deepEqual(usages, [
    { inUse: 1, waiting: 0, size: 1 },
    { inUse: 1, waiting: 1, size: 1 },
    { inUse: 1, waiting: 0, size: 1 },
    { inUse: 0, waiting: 0, size: 1 },
  ]);
  assert.equal(waits.length, 2);
  assert.equal(waits[0], 0);
  assert.ok((waits[1] ?? -1) >= 0);
});

test('each wait is reported as long as it was, in ms', async () => {
  const waits: number[] = [];
  const gate = new PoolGate({ size: 1, waitMs: 10_000, onWaited: (ms) => waits.push(ms) });
  const first = await gate.acquire(UNBOUNDED_WORK);
  const second = gate.acquire(UNBOUNDED_WORK);
  await new Promise((resolve) => setTimeout(resolve, 40));
  first();
  (await second)();
  assert.equal(waits[0], 0, 'a free turn: no wait');
  assert.ok((waits[1] ?? 0) >= 35 && (waits[1] ?? 0) < 2_000, `about 40 ms, not ${waits[1]}`);
});

test('tens of thousands of waits, through many compactions of the queue, lose no turn, refuse none, and keep the queue bounded', async () => {
  // 12 workers over 10 turns: two always wait, so nearly every turn passes through the queue. Its
  // array, held under 2,048 slots, must then be compacted at least once per 2,048 waits, over ten
  // times in all: a turn lost at each compaction would leave none, and every wait would then fail
  // as saturation.
  const size = 10;
  const workers = 12;
  const turnsEach = 2_500;
  const gate = new PoolGate({ size, waitMs: 2_000 });
  const refusals: unknown[] = [];
  let served = 0;
  let queued = 0;
  let mostSlots = 0;
  const worker = async (): Promise<void> => {
    for (let turn = 0; turn < turnsEach; turn++) {
      if (gate.usage.inUse === size) queued += 1;
      const release = await gate
        .acquire(UNBOUNDED_WORK)
        .catch((error: unknown) => void refusals.push(error));
      if (release === undefined) return;
      mostSlots = Math.max(mostSlots, gate.queueSlots);
      await new Promise((resolve) => setImmediate(resolve));
      served += 1;
      release();
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
  assert.equal(
    refusals.length,
    0,
    `${refusals.length} waits refused, the first: ${String(refusals[0])}`,
  );
  assert.equal(served, workers * turnsEach);
  assert.deepEqual(gate.usage, { inUse: 0, waiting: 0, size }, 'every turn given back');
  assert.ok(
    mostSlots < 2_048,
    `the queue's array grew to ${mostSlots} slots though at most ${workers - size} waited at once`,
  );
  assert.ok(
    queued > size * 2_048,
    `only ${queued} waits queued: too few to need ${size} compactions`,
  );
});
