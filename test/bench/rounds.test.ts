// A scenario at one concurrency, against real baseline processes: every server is warmed up and
// measured in each round, req/s is the median of the rounds, latencies come from every response,
// and an answer with another status than the expected one is counted, never hidden.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ServerProcess } from '../../bench/processes.js';
import { measureAt, summarise } from '../../bench/rounds.js';
import { startBaseline } from '../../bench/servers.js';

describe('one scenario at one concurrency', () => {
  const servers: ServerProcess[] = [];
  before(async () => {
    servers.push(await startBaseline('baseline a'), await startBaseline('baseline b'));
  });
  after(() => Promise.all(servers.map((s) => s.stop())));

  test('each server gets req/s, p50 and p99 from its rounds, and every answer is counted by status', async () => {
    const figures = await measureAt(servers, { method: 'GET', path: '/todos/1' }, 200, 4, {
      rounds: 2,
      duration_s: 0.3,
      warmup_s: 0.2,
    });
    assert.equal(figures.length, 2);
    for (const f of figures) {
      assert.equal(f.connections, 4);
      assert.ok(f.requestsPerSec > 0);
      assert.ok(f.p50_ms > 0 && f.p50_ms <= f.p99_ms, `${f.p50_ms} ≤ ${f.p99_ms}`);
      assert.equal(f.wrongStatus, 0);
      assert.equal(f.errors, 0);
      assert.ok((f.statusCounts['200'] ?? 0) > 0);
    }
  });

  test('answers with another status than the expected one are counted as wrong', async () => {
    const [f] = await measureAt(servers.slice(0, 1), { method: 'GET', path: '/todos/2' }, 200, 2, {
      rounds: 1,
      duration_s: 0.2,
      warmup_s: 0.1,
    });
    assert.ok(f !== undefined && f.wrongStatus > 0 && f.wrongStatus === f.statusCounts['404']);
  });

  test('req/s is the median of the rounds; the warm-up counts only for statuses', () => {
    const m = (requestsPerSec: number, latencies: number[], status = 200) => ({
      responses: latencies.length,
      requestsPerSec,
      latencies_ms: Float64Array.from(latencies).sort(),
      statusCounts: { [status]: latencies.length },
      wrongStatus: status === 200 ? 0 : latencies.length,
      errors: 0,
    });
    const f = summarise(10, [m(1, [100], 500)], [m(30, [1, 2]), m(10, [3]), m(20, [4])]);
    assert.equal(f.requestsPerSec, 20);
    assert.equal(f.p50_ms, 2);
    assert.equal(f.p99_ms, 4);
    assert.deepEqual(f.statusCounts, { 200: 4, 500: 1 });
    assert.equal(f.wrongStatus, 1);
  });

  test('the req/s of each round is kept in the order measured, so that servers measured in one round can be compared round by round', () => {
    const m = (requestsPerSec: number) => ({
      responses: 1,
      requestsPerSec,
      latencies_ms: Float64Array.of(1),
      statusCounts: { 200: 1 },
      wrongStatus: 0,
      errors: 0,
    });
    assert.deepEqual(summarise(10, [m(1)], [m(30), m(10), m(20)]).roundsPerSec, [30, 10, 20]);
  });
});
