// The request deadline in the pipeline (src/features/deadlines/deadline.ts), on a real server with a
// handler that waits as long as the test says: its timer goes once the answer is set, so that an
// answered request is not kept in memory until its deadline; and the time its client takes to send
// the body is not counted, as deadline.ts promises (Node's own time-outs bound that: 408).
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { deadlineStage } from '../../src/features/deadlines/deadline.js';
import { createRequestHandler } from '../../src/http/app.js';
import { pipelineStages } from '../../src/http/stages/pipeline-stages.js';
import { defineRoute } from '../../src/http/route.js';
import { RequestObserver } from '../../src/http/request-observer.js';
import { createLogger } from '../../src/observe/log.js';
import { todoIn } from '../../src/todo/model.js';
import { send } from '../support/http.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A server whose two routes wait `waitMs` before they answer: a read, and a write with a body. */
async function startWaiting(
  deadlineMs: number,
  waitMs: number,
): Promise<{ readonly server: Server; readonly url: string; readonly port: number }> {
  const log = createLogger('silent');
  const waited = async (): Promise<{ status: number; body: string }> => {
    await sleep(waitMs);
    return { status: 200, body: '{}' };
  };
  const routes = [
    defineRoute({
      method: 'GET',
      path: '/wait',
      status: 200,
      params: {},
      docs: { name: 'wait' },
      handle: waited,
    }),
    defineRoute({
      method: 'PUT',
      path: '/wait',
      status: 200,
      params: {},
      body: todoIn,
      docs: { name: 'wait_with_body' },
      handle: waited,
    }),
  ];
  const errorFormat = { name: 'default', catchAll: false } as const;
  const handler = createRequestHandler({
    pipeline: pipelineStages({
      routes,
      errorFormat,
      limits: { bodyBytesMax: 1024, nestingDepthMax: 8 },
      stages: [deadlineStage(deadlineMs)],
    }),
    errorFormat,
    log,
    observer: new RequestObserver({ log, accessLog: false }),
    shutdown: { started: false },
  });
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}`, port };
}

/** Timers that keep the process alive: a deadline's timer is one until it is cleared or fires. */
const liveTimers = (): number =>
  process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;

describe('the deadline in the pipeline', { timeout: SUITE_TIMEOUT_MS }, () => {
  test('a deadline timer is cleared when the answer is sent: an answered request keeps no timer until its deadline', async () => {
    const { server, url } = await startWaiting(60_000, 5);
    try {
      const before = liveTimers();
      for (let i = 0; i < 5; i++)
        assert.equal((await send(url, { method: 'GET', path: '/wait' })).status, 200);
      for (let i = 0; i < 5; i++) {
        const res = await send(url, {
          method: 'PUT',
          path: '/wait',
          headers: [['Content-Type', 'application/json']],
          body: '{"title":"t"}',
        });
        assert.equal(res.status, 200);
      }
      assert.equal(liveTimers(), before, 'ten answered requests, no timer left behind');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test('the time spent receiving the body is not counted toward the deadline', async () => {
    const deadlineMs = 300;
    const { server, port } = await startWaiting(deadlineMs, 50);
    try {
      // The head now, the body twice the deadline later: the handler then takes a sixth of it.
      const raw = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => {
          socket.write(
            'PUT /wait HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 13\r\nConnection: close\r\n\r\n',
          );
          setTimeout(() => socket.write('{"title":"t"}'), 2 * deadlineMs);
        });
        let received = '';
        socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
        socket.on('close', () => resolve(received));
        socket.on('error', reject);
      });
      assert.match(raw, /^HTTP\/1\.1 200 /, raw.split('\r\n')[0]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test('a handler that waits past the deadline is answered 504 with Retry-After, the body received or not', async () => {
    const { server, url } = await startWaiting(100, 1_000);
    try {
      const read = await send(url, { method: 'GET', path: '/wait' });
      assert.equal(read.status, 504);
      assert.equal(read.headers['retry-after'], '1');
      const write = await send(url, {
        method: 'PUT',
        path: '/wait',
        headers: [['Content-Type', 'application/json']],
        body: '{"title":"t"}',
      });
      assert.equal(write.status, 504);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
