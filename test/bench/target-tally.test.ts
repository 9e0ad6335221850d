// bench:history tallies the recorded runs: how often each target held and how far its figures
// spread, since one run on these machines says little.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { firstNumberText, renderHistory, selectRuns, tallyTargets, type RecordedRun } from '../../bench/target-tally.js';

const GET = 'GET /todos/1: req/s ≥ 0.80 × baseline';
const P99 = 'p99 latency ≤ 10 ms in every scenario';
const PG = 'POST /todos (PostgreSQL): two instances at least as fast as one';

function run(date: string, quick: boolean, targets: [string, string, boolean][]): RecordedRun {
  return { date, quick, targets: targets.map(([target, measured, holds]) => ({ target, measured, holds })) };
}

const RUNS: RecordedRun[] = [
  run('2026-11-24T09:30:51Z', false, [[GET, '0.72', false], [P99, 'worst 26.46 ms (POST /withdraw/alice/1, keyed)', false]]),
  run('2026-11-24T09:10:53Z', false, [[GET, '1.00', true], [P99, 'worst 23.1 ms (POST /withdraw/alice/1, keyed)', false], [PG, '0.70 × one', false]]),
  run('2026-11-24T14:37:30Z', true, [[GET, '1.16', true]]),
  run('2026-11-24T14:51:17Z', false, [[GET, '0.84', true]]),
];

describe('tally of recorded runs', () => {
  test('each target counts the runs that checked it and those where it held, with its figures least to most', () => {
    const tallies = tallyTargets(selectRuns(RUNS, undefined, false));
    assert.deepEqual(tallies, [
      { target: GET, runs: 3, held: 2, figures: [0.72, 0.84, 1], decimals: 2 },
      { target: P99, runs: 2, held: 0, figures: [23.1, 26.46], decimals: 2 },
      { target: PG, runs: 1, held: 0, figures: [0.7], decimals: 2 },
    ]);
  });

  test('a measured text gives its first number as written, whatever words surround it', () => {
    assert.equal(firstNumberText('0.84'), '0.84');
    assert.equal(firstNumberText('0.77 × one'), '0.77');
    assert.equal(firstNumberText('worst 12.99 ms (POST /withdraw/alice/1, keyed)'), '12.99');
    assert.equal(firstNumberText('worst 139 MB'), '139');
    assert.equal(firstNumberText('not run'), undefined);
  });

  test('quick runs are left out unless asked for, and --since keeps the runs from that moment on', () => {
    assert.deepEqual(selectRuns(RUNS, undefined, false).map((r) => r.date), ['2026-11-24T09:10:53Z', '2026-11-24T09:30:51Z', '2026-11-24T14:51:17Z']);
    assert.deepEqual(selectRuns(RUNS, '2026-11-24T09:20Z', true).map((r) => r.date), ['2026-11-24T09:30:51Z', '2026-11-24T14:37:30Z', '2026-11-24T14:51:17Z']);
    assert.throws(() => selectRuns(RUNS, 'yesterday', false), /not a date/);
  });

  test('the table shows runs, held, least, median and most per target, and which builds were measured', () => {
    const text = renderHistory([...selectRuns(RUNS, undefined, false), { ...run('2026-11-24T16:00:00Z', false, [[GET, '0.90', true]]), build: { commit: 'abc123', modified: true } }]);
    assert.match(text, /^4 runs, 2026-11-24T09:10:53Z to 2026-11-24T16:00:00Z; builds: not recorded, abc123\+ \(\+: with uncommitted changes\)\./);
    assert.match(text, /\| GET \/todos\/1: req\/s ≥ 0\.80 × baseline \| 4 \| 3 \| 0\.72 \| 0\.87 \| 1\.00 \|/);
    assert.match(text, /\| p99 latency ≤ 10 ms in every scenario \| 2 \| 0 \| 23\.10 \| 24\.78 \| 26\.46 \|/);
    assert.doesNotMatch(renderHistory(selectRuns(RUNS, undefined, false)), /uncommitted/);
    assert.equal(renderHistory([]), 'No recorded runs to tally.\n');
  });

  test('an odd number of runs has the middle figure for median, and figures keep the decimals they were written with', () => {
    const rss = 'peak RSS ≤ 150 MB per service process';
    const runs = [
      run('2026-11-24T01:00Z', false, [[GET, '1.00', true], [rss, 'worst 158 MB', false]]),
      run('2026-11-24T02:00Z', false, [[GET, '0.70', false], [rss, 'worst 139 MB', true]]),
      run('2026-11-24T03:00Z', false, [[GET, '1.00', true], [rss, 'worst 142 MB', true]]),
    ];
    const text = renderHistory(runs);
    assert.match(text, /\| GET \/todos\/1: req\/s ≥ 0\.80 × baseline \| 3 \| 2 \| 0\.70 \| 1\.00 \| 1\.00 \|/);
    assert.match(text, /\| peak RSS ≤ 150 MB per service process \| 3 \| 2 \| 139 \| 142 \| 158 \|/);
  });
});
