// The server-bound part pins the servers and wrk to cores 0 and 1, and first checks that the bench
// may run on both: it reads the cores taskset lists for it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { coreNumbers } from '../../bench/server-bound.js';

describe('cores of a taskset list', () => {
  test('single cores, ranges and both together', () => {
    assert.deepEqual([...coreNumbers('0,1')], [0, 1]);
    assert.deepEqual([...coreNumbers('0-3')], [0, 1, 2, 3]);
    assert.deepEqual([...coreNumbers('0-1,4')], [0, 1, 4]);
  });

  test('anything else is an error, not an empty set', () => {
    assert.throws(() => coreNumbers('zero'), /not a list of cores/);
  });
});
