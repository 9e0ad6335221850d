// The in-process limiter on a clock the test moves: GCRA admits a burst at once, then one request
// per emission interval, and in no interval of length T more than burst + rate × T, not even
// across the boundary of a window, where a fixed-window counter admits twice its limit.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decisionOf, gcra } from '../../src/rate-limits/decision.js';
import { GcraTable } from '../../src/rate-limits/gcra-table.js';

/** A clock that stands still until the test moves it. */
function manualClock(startMs = 1_000_000): { now: () => number; advance(ms: number): void } {
  let nowMs = startMs;
  return { now: () => nowMs, advance: (ms) => void (nowMs += ms) };
}

const TEN_PER_SECOND = { perSecond: 10, burst: 5 };

describe('GCRA in process', () => {
  test('a new client is admitted its whole burst at once, then refused', () => {
    const clock = manualClock();
    const table = new GcraTable(TEN_PER_SECOND, clock.now);
    const answers = Array.from({ length: 7 }, () => table.decide('a').admitted);
    assert.deepEqual(answers, [true, true, true, true, true, false, false]);
  });

  test('remaining counts down to 0, and growsInMs says when it next grows by one', () => {
    const clock = manualClock();
    const table = new GcraTable(TEN_PER_SECOND, clock.now);
    assert.deepEqual(
      Array.from({ length: 5 }, () => table.decide('a')).map((d) => [d.remaining, d.growsInMs]),
      [
        [4, 100],
        [3, 100],
        [2, 100],
        [1, 100],
        [0, 100],
      ],
    );
    clock.advance(130);
    // 130 ms later one interval has come back and 30 ms of the next: one more in 70 ms.
    const next = table.decide('a');
    assert.deepEqual([next.remaining, next.growsInMs], [0, 70]);
  });

  test('remaining is exactly what is admitted at once, none more before growsInMs, and one more at it', () => {
    const intervalMs = 700;
    const burst = 4;
    let tat: number | undefined;
    let nowMs = 0;
    let seed = 7;
    const random = (): number => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (let step = 0; step < 2000; step++) {
      nowMs += Math.floor(random() * 900);
      const decided = gcra(tat, nowMs, 1, intervalMs, burst);
      tat = decided.tat;
      const decision = decisionOf(decided.admitted === 1, tat, nowMs, intervalMs, burst);
      const atOnce = (atMs: number): number =>
        gcra(tat, atMs, burst + 1, intervalMs, burst).admitted;
      assert.equal(atOnce(nowMs), decision.remaining, `step ${step}`);
      if (decision.remaining === burst) continue;
      assert.ok(decision.growsInMs > 0, `step ${step}`);
      assert.equal(
        atOnce(nowMs + decision.growsInMs - 0.001),
        decision.remaining,
        `step ${step}: none more just before`,
      );
      assert.equal(
        atOnce(nowMs + decision.growsInMs),
        decision.remaining + 1,
        `step ${step}: one more at growsInMs`,
      );
      if (!decision.admitted) assert.equal(decision.retryAfterMs, decision.growsInMs);
    }
  });

  test('a refused request is told exactly how long to wait, and is admitted after that wait, not before', () => {
    const clock = manualClock();
    const table = new GcraTable(TEN_PER_SECOND, clock.now);
    for (let i = 0; i < 5; i++) table.decide('a');
    const refused = table.decide('a');
    assert.equal(refused.admitted, false);
    assert.equal(refused.retryAfterMs, 100);
    clock.advance(99);
    assert.equal(table.decide('a').admitted, false);
    clock.advance(1);
    assert.equal(table.decide('a').admitted, true);
  });

  test('a refused request changes nothing: refusals do not push the next admission back', () => {
    const clock = manualClock();
    const table = new GcraTable(TEN_PER_SECOND, clock.now);
    for (let i = 0; i < 5; i++) table.decide('a');
    for (let i = 0; i < 1000; i++) assert.equal(table.decide('a').admitted, false);
    clock.advance(100);
    assert.equal(table.decide('a').admitted, true);
  });

  test('clients and kinds are counted apart: one client over its limit does not touch another', () => {
    const clock = manualClock();
    const table = new GcraTable(TEN_PER_SECOND, clock.now);
    for (let i = 0; i < 10; i++) table.decide('a');
    assert.equal(table.decide('b').admitted, true);
    assert.equal(table.decide('b').remaining, 3);
  });

  test('in every interval of length T at most burst + rate × T are admitted, for a client at 4 times its rate', () => {
    const clock = manualClock();
    const table = new GcraTable(TEN_PER_SECOND, clock.now);
    const admittedAt: number[] = [];
    // Every 25 ms for 10 s: four times the rate.
    for (let t = 0; t <= 10_000; t += 25) {
      if (table.decide('a').admitted) admittedAt.push(t);
      clock.advance(25);
    }
    // Every window [start, start + T] of every length that starts at an admission.
    for (let i = 0; i < admittedAt.length; i++) {
      for (let j = i; j < admittedAt.length; j++) {
        const span = (admittedAt[j] as number) - (admittedAt[i] as number);
        assert.ok(
          j - i + 1 <= 5 + Math.floor((10 * span) / 1000),
          `${j - i + 1} admitted in ${span} ms`,
        );
      }
    }
    // And it is not stricter than it says: the whole 10 s admit burst + rate × 10 s.
    assert.equal(admittedAt.length, 5 + 100);
  });

  test('at a window boundary, where a fixed window admits twice its limit, GCRA admits burst + rate × T', () => {
    // A fixed window of 1 s and limit 10 admits 10 at 0.999 s and 10 more at 1.000 s: 20 in 1 ms.
    const clock = manualClock(0);
    const table = new GcraTable({ perSecond: 10, burst: 10 }, clock.now);
    clock.advance(999);
    let admitted = 0;
    for (let i = 0; i < 10; i++) if (table.decide('a').admitted) admitted += 1;
    clock.advance(1);
    for (let i = 0; i < 10; i++) if (table.decide('a').admitted) admitted += 1;
    assert.equal(admitted, 10, 'burst + 10/s × 1 ms = 10.01: ten, not twenty');
  });

  test('a rate that is no whole number of milliseconds (3/s) keeps the bound over a long run', () => {
    const clock = manualClock();
    const table = new GcraTable({ perSecond: 3, burst: 2 }, clock.now);
    let admitted = 0;
    for (let t = 0; t < 60_000; t += 7) {
      if (table.decide('a').admitted) admitted += 1;
      clock.advance(7);
    }
    assert.ok(admitted <= 2 + (3 * 60_000) / 1000, `${admitted}`);
    assert.ok(admitted >= (3 * 60_000) / 1000 - 1, `${admitted}: about the rate, not fewer`);
  });

  test('the table holds at most the clients admitted within one window and a sweep period: past rows go when a row is added', () => {
    const clock = manualClock();
    // A window of 500 ms: rows are swept at most every 250 ms.
    const table = new GcraTable(TEN_PER_SECOND, clock.now);
    for (let i = 0; i < 5_000; i++) table.decide(`client-${i}`); // each past 100 ms later
    assert.equal(table.size, 5_000);
    clock.advance(600);
    for (let i = 0; i < 10; i++) for (let j = 0; j < 5; j++) table.decide(`late-${i}`); // a whole burst each: past at 1,100 ms
    assert.equal(
      table.size,
      10,
      'the 5,000 past rows went when a row was added a sweep period later',
    );
    clock.advance(499);
    table.decide('new');
    assert.equal(table.size, 11, 'clients within their window keep their rows');
    clock.advance(1);
    table.decide('newer');
    assert.equal(table.size, 12, 'no sweep until a sweep period has passed');
    clock.advance(250);
    table.decide('newest');
    assert.equal(table.size, 1);
  });

  test('the table holds at most its rows: past rows go first, then the row made first, which starts afresh', () => {
    const clock = manualClock();
    const table = new GcraTable(TEN_PER_SECOND, clock.now, 3);
    table.decide('a');
    table.decide('b');
    table.decide('c');
    clock.advance(1000); // a, b, c are past: the same as no rows
    table.decide('d');
    assert.equal(table.size, 1, 'the past rows were dropped to make room');
    table.decide('e');
    table.decide('f');
    for (let i = 0; i < 4; i++) table.decide('d'); // d is at its limit now
    assert.equal(table.decide('d').admitted, false);
    table.decide('g'); // full, nothing past within the second: d's row, made first, goes
    assert.equal(table.size, 3);
    assert.equal(table.decide('d').admitted, true, 'a forgotten client has its whole burst again');
  });

  test('the decision for several requests at once is the decision for each in turn (the shared limiter batches them)', () => {
    const intervalMs = 100;
    let tat: number | undefined = 5_000;
    let oneByOne = 0;
    for (let i = 0; i < 9; i++) {
      const step = gcra(tat, 5_000, 1, intervalMs, 5);
      oneByOne += step.admitted;
      tat = step.tat;
    }
    const together = gcra(5_000, 5_000, 9, intervalMs, 5);
    assert.equal(together.admitted, oneByOne);
    assert.equal(together.tat, tat);
    assert.deepEqual(decisionOf(false, together.tat, 5_000, intervalMs, 5), {
      admitted: false,
      remaining: 0,
      growsInMs: 100,
      retryAfterMs: 100,
    });
  });
});
