// Starting and stopping as a process manager does it (Docker, systemd): the start line says what
// runs where, `npm start` hands SIGTERM and SIGINT to the server, requests in flight finish, a
// kept-alive client is told to leave, and shutdown says when it starts and ends.
import assert from 'node:assert/strict';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { describe, test } from 'node:test';
import { readConfig } from '../src/config.js';
import {
  startServiceProcess,
  startWithNpm,
  type ServiceProcess,
} from './support/service-process.js';
import { PROCESS_SUITE_TIMEOUT_MS } from './support/time-limits.js';

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
}

/** A POST whose body is held back after its first bytes: in flight until `finish()`. */
function postInFlight(
  url: string,
  path: string,
  body: string,
  agent: Agent | false = false,
): { answer: Promise<Answer>; finish(): void } {
  const target = new URL(url);
  const req = request({
    host: target.hostname,
    port: target.port,
    method: 'POST',
    path,
    agent,
    headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
  });
  const answer = new Promise<Answer>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', reject);
  });
  req.write(body.slice(0, 5));
  return { answer, finish: () => req.end(body.slice(5)) };
}

/** Resolves once the server is handling the held-back request: its in-flight gauge counts it beside the scrape. */
async function serverHolds(url: string): Promise<void> {
  for (let scrapes = 1; ; scrapes++) {
    const exposition = await (await fetch(`${url}/metrics`)).text();
    if (/^http_requests_in_flight\{service="todo"\} 2$/m.test(exposition)) return;
    assert.ok(scrapes < 500, 'the held-back request never reached the server');
  }
}

function logLines(started: ServiceProcess): Record<string, unknown>[] {
  return started
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const TODO_BODY = '{"title":"in flight"}';

describe('starting', { timeout: PROCESS_SUITE_TIMEOUT_MS }, () => {
  test('the start line says the service, version, pid, address, error format and store kind, and never a password', async () => {
    const started = await startServiceProcess([
      'todo',
      '--db',
      'postgres://operator:hunter2@127.0.0.1:1/nowhere',
      '--errors',
      'unified',
    ]);
    try {
      const line = logLines(started).find((entry) => entry.msg === 'listening');
      const { time, hostname, ...rest } = line ?? {};
      assert.equal(typeof time, 'number');
      assert.equal(typeof hostname, 'string');
      assert.deepEqual(rest, {
        level: 30,
        pid: started.pid,
        service: 'todo',
        version: '0.1.0',
        url: started.urls[0],
        errors: 'unified',
        catchAll: false,
        store: 'postgres',
        accessLog: true,
        metrics: true,
        msg: 'listening',
      });
    } finally {
      await started.kill('SIGTERM');
    }
    assert.ok(!started.output().includes('hunter2'), started.output());
  });

  test('--access-log and --metrics take on or off, also from SVC_ACCESS_LOG and SVC_METRICS', () => {
    assert.deepEqual([readConfig([], {}).accessLog, readConfig([], {}).metrics], [true, true]);
    assert.deepEqual(
      [
        readConfig(['--access-log', 'off', '--metrics=off'], {}).accessLog,
        readConfig(['--metrics=off'], {}).metrics,
      ],
      [false, false],
    );
    const fromEnv = readConfig([], { SVC_ACCESS_LOG: 'off', SVC_METRICS: 'off' });
    assert.deepEqual([fromEnv.accessLog, fromEnv.metrics], [false, false]);
    assert.throws(
      () => readConfig(['--access-log', 'no'], {}),
      /--access-log must be on or off, not "no"/,
    );
    assert.throws(
      () => readConfig([], { SVC_METRICS: 'yes' }),
      /--metrics must be on or off, not "yes"/,
    );
  });
});

describe('stopping', { timeout: PROCESS_SUITE_TIMEOUT_MS }, () => {
  test('shutdown logs its start (with the signal) and its end (whether connections were cut), then exits 0', async () => {
    const started = await startServiceProcess(['todo', '--db', 'memory']);
    await started.kill('SIGTERM');
    assert.equal(await started.exited, 0);
    const lines = logLines(started).filter(
      (entry) => entry.msg === 'shutting down' || entry.msg === 'shut down',
    );
    assert.deepEqual(
      lines.map(({ msg, signal, connectionsCut }) => ({ msg, signal, connectionsCut })),
      [
        { msg: 'shutting down', signal: 'SIGTERM', connectionsCut: undefined },
        { msg: 'shut down', signal: undefined, connectionsCut: false },
      ],
    );
  });

  test('after SIGTERM an answer on a kept-alive connection says Connection: close', async () => {
    const started = await startServiceProcess(['todo', '--db', 'memory', '--access-log', 'off']);
    const url = started.urls[0] as string;
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const first = postInFlight(url, '/todos', TODO_BODY, agent);
      first.finish();
      assert.equal(
        (await first.answer).headers.connection,
        'keep-alive',
        'before SIGTERM the connection is kept',
      );
      const second = postInFlight(url, '/todos', TODO_BODY, agent);
      await serverHolds(url);
      process.kill(started.pid, 'SIGTERM');
      await started.logged('shutting down');
      second.finish();
      const answer = await second.answer;
      assert.equal(answer.status, 201);
      assert.equal(answer.headers.connection, 'close');
      assert.equal(await started.exited, 0);
    } finally {
      agent.destroy();
      await started.kill('SIGKILL');
    }
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    test(`${signal} to the npm start process stops the server gracefully: the request in flight finishes, exit 0, no process left`, async () => {
      const started = await startWithNpm(['todo', '--db', 'memory']);
      const url = started.urls[0] as string;
      const serverPid = logLines(started).find((entry) => entry.msg === 'listening')?.pid as number;
      assert.notEqual(serverPid, started.pid, "the server is npm's child");
      try {
        const inFlight = postInFlight(url, '/todos', TODO_BODY);
        await serverHolds(url);
        process.kill(started.pid, signal);
        await started.logged('shutting down');
        inFlight.finish();
        const answer = await inFlight.answer;
        assert.equal(answer.status, 201);
        assert.deepEqual(JSON.parse(answer.text), { id: 2, title: 'in flight', done: false });
        assert.equal(await started.exited, 0);
        assert.ok(
          logLines(started).some(
            (entry) => entry.msg === 'shutting down' && entry.signal === signal,
          ),
        );
        assert.equal(isAlive(serverPid), false, 'the server process is gone, not adopted by PID 1');
      } finally {
        if (isAlive(serverPid)) process.kill(serverPid, 'SIGKILL');
      }
    });
  }
});
