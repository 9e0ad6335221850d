// --rate-limit's value: each kind's RATE/s:BURST, either part optional, and anything else refused
// with a message that says what is wrong.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { kindOf, parseRateLimits } from '../../src/rate-limits/policy.js';

test('writes=RATE/s:BURST,reads=RATE/s:BURST is read as two rates; either part may be left out', () => {
  assert.deepEqual(parseRateLimits('writes=20/s:40,reads=200/s:400'), {
    writes: { perSecond: 20, burst: 40 },
    reads: { perSecond: 200, burst: 400 },
  });
  assert.deepEqual(parseRateLimits('reads=0.5/s:1'), { reads: { perSecond: 0.5, burst: 1 } });
});

test('a value that is not two rates is refused with a message naming the part at fault', () => {
  for (const [text, message] of [
    ['writes=20/s', /"writes=20\/s" is not writes=RATE\/s:BURST/],
    ['writes=20/m:40', /is not writes=RATE/],
    ['posts=1/s:1', /is not writes=RATE/],
    ['writes=0/s:4', /rate of writes must be above 0/],
    ['reads=5/s:0', /burst of reads must be from 1/],
    ['reads=5/s:5,reads=6/s:6', /reads is given twice/],
    ['', /is not writes=RATE/],
  ] as const) {
    const parsed = parseRateLimits(text);
    assert.equal(typeof parsed, 'string', text);
    assert.match(parsed as string, message, text);
  }
});

test('GET and HEAD are reads; POST, PUT and DELETE writes; other methods count under neither', () => {
  assert.deepEqual(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH'].map(kindOf), [
    'reads',
    'reads',
    'writes',
    'writes',
    'writes',
    undefined,
    undefined,
  ]);
});
