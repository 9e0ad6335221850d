// The overload bench's generator (bench/open-loop.ts) against a real HTTP server that answers after
// a set delay: requests go out on their schedule whatever the answers, and each one's latency
// counts from when it was due, so that a slow server cannot slow the load down or hide the wait.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { offer, requestBytes } from '../../bench/open-loop.js';

const ANSWER_DELAY_MS = 100;
const request = requestBytes('POST', '/todos', '{"title":"x"}');

describe('the open-loop generator', () => {
  let server: Server;
  let port = 0;
  let answered = 0;
  before(async () => {
    // Every other answer is a 503, so that answers are counted by status.
    server = createServer((req, res) => {
      req.resume();
      const status = answered++ % 2 === 0 ? 201 : 503;
      setTimeout(
        () =>
          res
            .writeHead(status, { 'content-type': 'application/json', 'content-length': 2 })
            .end('{}'),
        ANSWER_DELAY_MS,
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('sends at the offered rate whatever the answers, opening connections while all are busy', async () => {
    const answers = await offer({
      port,
      request,
      rate: 50,
      seconds: 1,
      connectionsMax: 100,
      connectionsAtStart: 1,
      warmUpSeconds: 0,
    });
    const counts = [...answers.latencies.values()].map((list) => list.length);
    assert.equal(
      counts.reduce((sum, n) => sum + n, 0),
      50,
    );
    assert.deepEqual([...answers.latencies.keys()].sort(), [201, 503]);
    assert.equal(answers.unanswered, 0);
    // 50 a second answered in 100 ms each: about five in flight at once, never one.
    assert.ok(answers.connectionsPeak >= 4, `${answers.connectionsPeak} connections`);
    for (const list of answers.latencies.values())
      for (const ms of list) assert.ok(ms >= ANSWER_DELAY_MS - 1, `${ms} ms`);
  });

  test('counts a request that waited for a connection from when it was due', async () => {
    // One connection, a request due every 50 ms, each answered in 100 ms: the line grows, and the
    // tenth request, due at 450 ms, is answered at about 1,000 ms.
    const answers = await offer({
      port,
      request,
      rate: 20,
      seconds: 0.5,
      connectionsMax: 1,
      connectionsAtStart: 1,
      warmUpSeconds: 0,
    });
    const latencies = [...answers.latencies.values()].flat();
    assert.equal(latencies.length, 10);
    assert.equal(answers.connectionsPeak, 1);
    assert.ok(Math.max(...latencies) >= 500, `the last waited ${Math.max(...latencies)} ms`);
  });

  test('in a closed loop (rate 0), each connection sends again when answered', async () => {
    const answers = await offer({
      port,
      request,
      rate: 0,
      seconds: 0.5,
      connectionsMax: 2,
      connectionsAtStart: 2,
      warmUpSeconds: 0,
    });
    const latencies = [...answers.latencies.values()].flat().sort((a, b) => a - b);
    // Two connections, one request in flight each, answered in 100 ms, for 500 ms: at most six
    // rounds; and each latency counts from its own sending, not from the start of the run.
    assert.ok(latencies.length >= 4 && latencies.length <= 12, `${latencies.length} answers`);
    assert.equal(answers.connectionsPeak, 2);
    const median = latencies[Math.floor(latencies.length / 2)] as number;
    assert.ok(median >= ANSWER_DELAY_MS - 1 && median < 2 * ANSWER_DELAY_MS, `median ${median} ms`);
  });
});
