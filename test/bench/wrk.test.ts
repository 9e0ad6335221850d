// The server-bound part of the bench reads wrk's summary: these are wrk 4.1's own words, so that a
// round which lost answers, or got answers of the wrong class, fails the run rather than count.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parseWrk, wrkScript } from '../../bench/wrk.js';

const SUMMARY_OK = `Running 2s test @ http://127.0.0.1:9921/todos/1
  1 threads and 50 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.30ms  412.05us  12.63ms   93.30%
    Req/Sec    38.68k     2.88k   41.32k    85.00%
  77036 requests in 2.00s, 13.48MB read
Requests/sec:  38513.24
Transfer/sec:      6.74MB
`;

const SUMMARY_NOT_OK = `Running 1s test @ http://127.0.0.1:9921/nowhere
  1 threads and 5 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   413.41us    1.01ms  16.41ms   93.30%
    Req/Sec    27.32k    11.88k   38.68k    72.73%
  29786 requests in 1.10s, 5.23MB read
  Socket errors: connect 0, read 2, write 0, timeout 1
  Non-2xx or 3xx responses: 29780
Requests/sec:  27085.84
Transfer/sec:      4.75MB
`;

describe('wrk summary', () => {
  test('a 2xx run with no errors reads as its answers and rate', () => {
    assert.deepEqual(parseWrk(SUMMARY_OK, 200), { responses: 77036, requestsPerSec: 38513.24, wrongStatus: 0, errors: 0 });
  });

  test('answers that are not 2xx count as wrong where a 2xx is expected', () => {
    assert.equal(parseWrk(SUMMARY_NOT_OK, 200).wrongStatus, 29780);
  });

  test('answers that are 2xx count as wrong where a 4xx is expected', () => {
    assert.equal(parseWrk(SUMMARY_NOT_OK, 404).wrongStatus, 6);
    assert.equal(parseWrk(SUMMARY_OK, 422).wrongStatus, 77036);
  });

  test('socket errors and time-outs are counted', () => {
    assert.equal(parseWrk(SUMMARY_NOT_OK, 404).errors, 3);
  });

  test('output without a summary is an error, not zero requests', () => {
    assert.throws(() => parseWrk('unable to connect to 127.0.0.1:9921 Connection refused', 200), /no summary/);
  });
});

describe('wrk script', () => {
  test('sets the method, the body byte for byte and the content type', () => {
    const dir = mkdtempSync(join(tmpdir(), 'wrk-script-'));
    try {
      const file = wrkScript(dir, 'POST /todos, no title', { method: 'POST', path: '/todos', body: '\n{"t":"\\é"}', contentType: 'application/json' });
      assert.equal(
        readFileSync(file, 'utf8'),
        'wrk.method = "POST"\nwrk.body = "\\010{\\034t\\034:\\034\\092\\195\\169\\034}"\nwrk.headers["Content-Type"] = "application/json"\n',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('refuses what wrk cannot send: a fresh key each time', () => {
    assert.throws(() => wrkScript(tmpdir(), 'keyed', { method: 'POST', path: '/x', idempotencyKey: 'fresh' }), /Idempotency-Key/);
  });
});
