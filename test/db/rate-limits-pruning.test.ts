// The shared limiter's own pruning rounds (src/db/rate-limits-pruning.ts): one a sweep period,
// never two at once, an outage logged once (not once a round, which may be four times a second) and
// its end once, and stopping waits for the round in progress.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startRateLimitPruning } from '../../src/db/rate-limits-pruning.js';
import { sweepEveryMs } from '../../src/rate-limits/policy.js';
import { createLogger } from '../../src/observe/log.js';

test('the sweep period is a quarter of the longest window, from 250 ms to 10 s', () => {
  assert.deepEqual(
    [sweepEveryMs(5), sweepEveryMs(2_000), sweepEveryMs(8_000), sweepEveryMs(2_000_000)],
    [250, 500, 2_000, 10_000],
  );
});

test('rounds a sweep period apart; an outage is logged once, and once when pruning works again; stop waits for the round', async () => {
  const lines: { msg: string; reason?: string }[] = [];
  const log = createLogger('info', (line) =>
    lines.push(JSON.parse(line) as { msg: string; reason?: string }),
  );
  const outcomes = ['fail', 'fail', 'fail', 'ok', 'ok', 'fail'];
  let rounds = 0;
  let inRound = false;
  const pruning = startRateLimitPruning(
    async () => {
      assert.equal(inRound, false, 'never two rounds at once');
      inRound = true;
      await sleep(30);
      inRound = false;
      const outcome = outcomes[rounds++] ?? 'fail';
      if (outcome === 'fail') throw new Error('connection refused');
      return 0;
    },
    10,
    log,
  );
  while (rounds < outcomes.length) await sleep(10);
  await pruning.stop();
  assert.deepEqual(
    lines.map(({ msg, reason }) => [msg, reason]),
    [
      ['pruning past rate-limit rows failed; tried again each round', 'connection refused'],
      ['pruning past rate-limit rows works again', undefined],
      ['pruning past rate-limit rows failed; tried again each round', 'connection refused'],
    ],
  );
  const after = rounds;
  await sleep(50);
  assert.equal(rounds, after, 'no round after stop');
});
