// The server-bound part pins the servers and wrk to cores 0 and 1 after checking that the bench may
// run on both, and reports how busy wrk's core was from /proc/stat.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { busyShare, coreNumbers, parseCoreTimes } from '../../bench/cores.js';

describe('cores of a taskset list', () => {
  test('single cores, ranges and both together', () => {
    assert.deepEqual([...coreNumbers('0,1')], [0, 1]);
    assert.deepEqual([...coreNumbers('0-3')], [0, 1, 2, 3]);
    assert.deepEqual([...coreNumbers('0-1,4')], [0, 1, 4]);
  });

  test('anything else is an error, not a set of cores', () => {
    for (const list of ['zero', '', '0,', '0,,1', '3-1', '1-', '-1']) assert.throws(() => coreNumbers(list), /not a list of cores/, list);
  });
});

// Two readings of /proc/stat, 100 ticks apart on each core (user nice system idle iowait irq softirq steal guest guest_nice).
const BEFORE = 'cpu  500 0 100 900 0 0 0 0 0 0\ncpu0 300 0 50 400 0 0 0 0 0 0\ncpu1 200 0 50 500 0 0 0 0 0 0\nintr 1 2 3\n';
const AFTER = 'cpu  600 0 150 950 0 0 0 0 0 0\ncpu0 370 0 60 410 0 10 5 5 40 0\ncpu1 240 0 60 530 10 0 0 0 0 0\nintr 1 2 3\n';

describe('busy share of a core', () => {
  test('user, nice, system, irq and softirq are busy; idle, iowait and stolen time are not; guest time is not counted twice', () => {
    // cpu0: busy 70 + 10 + 10 + 5 = 95 of 100 (5 idle... here 10 idle and 5 stolen: 95 + 10 + 5 = 110 ticks in all).
    assert.equal(busyShare(parseCoreTimes(BEFORE), parseCoreTimes(AFTER), 0), 95 / 110);
    // cpu1: busy 40 + 10 = 50, idle 30, iowait 10: 90 ticks.
    assert.equal(busyShare(parseCoreTimes(BEFORE), parseCoreTimes(AFTER), 1), 50 / 90);
  });

  test('no tick between the readings, or no such core, is unknown rather than a number', () => {
    assert.equal(busyShare(parseCoreTimes(BEFORE), parseCoreTimes(BEFORE), 0), undefined);
    assert.equal(busyShare(parseCoreTimes(BEFORE), parseCoreTimes(AFTER), 2), undefined);
  });

  test('the line of all cores together is not read as a core', () => {
    assert.deepEqual([...parseCoreTimes(BEFORE).keys()], [0, 1]);
  });
});
