// The background pruning of expired idempotency records (src/db/idempotency-pruning.ts): when its
// rounds run, what each asks the store to delete, how far one round goes, and how it stops. The
// clock is node:test's mock of setInterval and Date; `prune` is a recording stand-in for a store's
// pruneKeys (the stores' own pruning is tested against real databases in test/store).
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { startKeyPruning, type KeyPruning } from '../../src/db/idempotency-pruning.js';
import { PRUNE_BATCH_ROWS } from '../../src/db/idempotency-records.js';
import { createLogger } from '../../src/observe/log.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
/** The clock's start: any fixed time, so that the bounds asked for can be compared exactly. */
const EPOCH = 1_800_000_000_000;

/** Lets the promises of a round settle (setImmediate is not mocked). */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

interface Recorded {
  /** The bound of each call to prune, in order. */
  readonly bounds: number[];
  /** What the next calls answer (rows deleted); once empty, 0. */
  readonly answers: (number | Error)[];
  readonly prune: (expiredBeforeMs: number) => Promise<number>;
}

function recorded(...answers: (number | Error)[]): Recorded {
  const bounds: number[] = [];
  return {
    bounds,
    answers,
    prune: (expiredBeforeMs) => {
      bounds.push(expiredBeforeMs);
      const answer = answers.shift() ?? 0;
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
    },
  };
}

/** A prune whose every batch waits until the test releases it with its answer. */
function heldPrune(): {
  prune: () => Promise<number>;
  release: (rows: number) => void;
  readonly calls: number;
} {
  let release: (rows: number) => void = () => undefined;
  let calls = 0;
  return {
    prune: () => (calls++, new Promise<number>((resolve) => (release = resolve))),
    release: (rows) => release(rows),
    get calls() {
      return calls;
    },
  };
}

function mockClock(t: TestContext): void {
  t.mock.timers.enable({ apis: ['setInterval', 'setTimeout', 'Date'], now: EPOCH });
}

/** Pruning with held batches (keys living 4 minutes), its first round started and waiting for its first batch. */
async function firstRoundHeld(
  t: TestContext,
): Promise<{ held: ReturnType<typeof heldPrune>; pruning: KeyPruning }> {
  mockClock(t);
  const held = heldPrune();
  const pruning = startKeyPruning(held.prune, 4 * MINUTE);
  t.mock.timers.tick(MINUTE);
  await settle();
  return { held, pruning };
}

describe('pruning expired idempotency keys in the background', () => {
  test('a round runs every quarter of the time to live, and asks for the records older than that time to live', async (t) => {
    mockClock(t);
    const ttl = 8 * MINUTE;
    const { bounds, prune } = recorded();
    const pruning = startKeyPruning(prune, ttl);
    t.mock.timers.tick(2 * MINUTE - 1);
    await settle();
    assert.deepEqual(bounds, [], 'no round before a quarter of the time to live');
    t.mock.timers.tick(1);
    await settle();
    assert.deepEqual(bounds, [EPOCH + 2 * MINUTE - ttl]);
    t.mock.timers.tick(2 * MINUTE);
    await settle();
    assert.deepEqual(bounds, [EPOCH + 2 * MINUTE - ttl, EPOCH + 4 * MINUTE - ttl]);
    await pruning.stop();
  });

  test('the rounds are at most ten minutes apart however long keys live (24 hours by default)', async (t) => {
    mockClock(t);
    const { bounds, prune } = recorded();
    const pruning = startKeyPruning(prune, 24 * HOUR);
    t.mock.timers.tick(10 * MINUTE - 1);
    await settle();
    assert.equal(bounds.length, 0);
    t.mock.timers.tick(1);
    await settle();
    assert.deepEqual(bounds, [EPOCH + 10 * MINUTE - 24 * HOUR]);
    await pruning.stop();
  });

  test('the rounds are at least a second apart however short keys live', async (t) => {
    mockClock(t);
    const { bounds, prune } = recorded();
    const pruning = startKeyPruning(prune, 2 * SECOND);
    t.mock.timers.tick(SECOND - 1);
    await settle();
    assert.equal(bounds.length, 0, 'not at a quarter of two seconds');
    t.mock.timers.tick(1);
    await settle();
    assert.deepEqual(bounds, [EPOCH + SECOND - 2 * SECOND]);
    await pruning.stop();
  });

  test('a round goes on while batches come back full, and ends at the first short one', async (t) => {
    mockClock(t);
    const { bounds, prune } = recorded(
      PRUNE_BATCH_ROWS,
      PRUNE_BATCH_ROWS,
      PRUNE_BATCH_ROWS - 1,
      PRUNE_BATCH_ROWS,
    );
    const pruning = startKeyPruning(prune, 4 * MINUTE);
    t.mock.timers.tick(MINUTE);
    await settle();
    assert.equal(
      bounds.length,
      3,
      'three batches: two full, one short; the fourth answer is for the next round',
    );
    assert.ok(
      bounds.every((bound) => bound === EPOCH + MINUTE - 4 * MINUTE),
      'one bound for the whole round',
    );
    await pruning.stop();
  });

  test('one round deletes at most 100 batches; one that ends there, the table still behind, is followed by the next a second later', async (t) => {
    mockClock(t);
    const { bounds, prune } = recorded(...Array<number>(250).fill(PRUNE_BATCH_ROWS));
    // A day's keys: rounds every ten minutes, and yet a table far behind is caught up at once.
    const pruning = startKeyPruning(prune, 24 * HOUR);
    t.mock.timers.tick(10 * MINUTE);
    await settle();
    await settle();
    assert.equal(bounds.length, 100);
    t.mock.timers.tick(SECOND - 1);
    await settle();
    assert.equal(bounds.length, 100, 'not before a second');
    t.mock.timers.tick(1);
    await settle();
    assert.equal(bounds.length, 200, 'the next round a second later');
    t.mock.timers.tick(SECOND);
    await settle();
    assert.equal(bounds.length, 251, 'and the next: the 50 full answers left, then a short one');
    t.mock.timers.tick(SECOND);
    await settle();
    assert.equal(bounds.length, 251, 'a round that ended short waits for the interval');
    await pruning.stop();
  });

  test('a failed round is logged as a warning with its reason, and the next round tries again', async (t) => {
    mockClock(t);
    const lines: { level: number; msg: string; reason?: string }[] = [];
    const log = createLogger('info', (line) =>
      lines.push(JSON.parse(line) as { level: number; msg: string; reason?: string }),
    );
    const { bounds, prune } = recorded(new Error('connection refused'), 3);
    const pruning = startKeyPruning(prune, 4 * MINUTE, log);
    t.mock.timers.tick(MINUTE);
    await settle();
    assert.deepEqual(
      lines.map(({ level, msg, reason }) => ({ level, msg, reason })),
      [
        {
          level: 40,
          msg: 'pruning expired idempotency keys failed; tried again later',
          reason: 'connection refused',
        },
      ],
    );
    t.mock.timers.tick(MINUTE);
    await settle();
    assert.equal(bounds.length, 2, 'the next round ran');
    assert.equal(lines.length, 1, 'and said nothing');
    await pruning.stop();
  });

  test('a failure that is not an Error is logged as text; without a logger a failure is silent and the rounds go on', async (t) => {
    mockClock(t);
    const lines: { reason?: string }[] = [];
    const log = createLogger('info', (line) => lines.push(JSON.parse(line) as { reason?: string }));
    const pruning = startKeyPruning(
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a non-Error, as tested
      () => Promise.reject('the database said no'),
      4 * MINUTE,
      log,
    );
    t.mock.timers.tick(MINUTE);
    await settle();
    assert.deepEqual(
      lines.map(({ reason }) => reason),
      ['the database said no'],
    );
    await pruning.stop();

    let calls = 0;
    const silent = startKeyPruning(() => (calls++, Promise.reject(new Error('no'))), 4 * MINUTE);
    t.mock.timers.tick(MINUTE);
    await settle();
    t.mock.timers.tick(MINUTE);
    await settle();
    assert.equal(calls, 2);
    await silent.stop();
  });

  test('a round still running when the next is due is not doubled: the next starts after it ends', async (t) => {
    const { held, pruning } = await firstRoundHeld(t);
    t.mock.timers.tick(MINUTE);
    await settle();
    assert.equal(held.calls, 1, 'the first round still waits for its batch');
    held.release(0);
    await settle();
    t.mock.timers.tick(MINUTE);
    await settle();
    assert.equal(held.calls, 2, 'a round at the next tick once the first ended');
    held.release(0);
    await pruning.stop();
  });

  test('stop ends the rounds: it waits for the batch in progress, starts no further batch, and no round follows', async (t) => {
    const { held, pruning } = await firstRoundHeld(t);
    let stopped = false;
    const stopping = pruning.stop().then(() => (stopped = true));
    await settle();
    assert.equal(stopped, false, 'stop waits for the batch in progress');
    held.release(PRUNE_BATCH_ROWS);
    await stopping;
    assert.equal(held.calls, 1, 'a full batch, but no further batch after stop');
    t.mock.timers.tick(10 * MINUTE);
    await settle();
    assert.equal(held.calls, 1, 'and no round after stop');
  });
});
