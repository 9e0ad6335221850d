// The command line as a user meets it: bad options, --help, start, a store that survives a
// restart, and a clean exit on SIGTERM.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { request } from 'node:http';
import { describe, test } from 'node:test';
import { get, json, postJson, send } from './support/http.js';
import { runCli, startServiceProcess } from './support/service-process.js';
import { PROCESS_SUITE_TIMEOUT_MS } from './support/time-limits.js';

interface Finished {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

async function run(args: readonly string[]): Promise<Finished> {
  const child = runCli(args);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

describe('command line', { timeout: PROCESS_SUITE_TIMEOUT_MS }, () => {
  test('an unknown option is one line on stderr and exit code 2', async () => {
    const result = await run(['--bogus']);
    assert.equal(result.code, 2);
    assert.equal(result.stderr.trim().split('\n').length, 1);
    assert.match(result.stderr, /unknown option --bogus/);
  });

  test('a bad value is one line on stderr and exit code 2', async () => {
    for (const args of [
      ['--port', 'abc'],
      ['--errors', 'fancy'],
      ['--db', 'mysql://x'],
      ['--accounts', 'alice=-1'],
      ['nobank'],
      ['--host='],
      ['all', '--port', '65535'],
      ['bank', '--catch-all'],
      ['bank', '--errors', 'problem', '--catch-all'],
      ['--metrics-listen', 'x'],
      ['--metrics-listen', '127.0.0.1:70000'],
      ['--metrics', 'off', '--metrics-listen', '9464'],
      ['--cors-origin', 'https://a.example/'],
      ['--rate-limit', 'writes=20/m:40'],
      ['--trust-proxy', '10.0.0.1'],
      ['--rate-limit', 'reads=5/s:5', '--rate-limit-store-down', 'open'],
      ['--deprecate', 'GET:/todos/{todo_id}@2026-02-30T00:00:00Z/2027-01-01T00:00:00Z'],
      // Known only once the services are: an operation the to-do service does not have.
      [
        'todo',
        '--port',
        '0',
        '--db',
        'memory',
        '--deprecate',
        'GET:/accounts/{account}@2026-01-01T00:00:00Z/2027-01-01T00:00:00Z',
      ],
    ]) {
      const result = await run(args);
      assert.equal(result.code, 2, args.join(' '));
      assert.equal(result.stderr.trim().split('\n').length, 1, args.join(' '));
    }
  });

  test('--errors problem makes both services answer RFC 9457 problems', async () => {
    const started = await startServiceProcess(
      ['all', '--db', 'memory', '--errors', 'problem', '--log-level', 'info'],
      2,
    );
    try {
      const [todo, bank] = started.urls as [string, string];
      for (const [url, path, detail] of [
        [todo, '/todos/2', 'Todo not found'],
        [bank, '/accounts/zed', 'Account zed not found'],
      ] as const) {
        const res = await get(url, path);
        assert.equal(res.headers['content-type'], 'application/problem+json');
        assert.deepEqual(json(res), {
          type: 'about:blank',
          title: 'Not Found',
          status: 404,
          detail,
          code: 'HTTP_404',
        });
      }
    } finally {
      await started.kill('SIGTERM');
    }
  });

  test('--metrics-listen serves /metrics of each service on an address of its own, and not on the API ports', async () => {
    // Port 0: each service's metrics take a free port, which its listening line names.
    const started = await startServiceProcess(
      ['all', '--db', 'memory', '--port', '0', '--metrics-listen', '127.0.0.1:0'],
      2,
    );
    try {
      const lines = started
        .output()
        .split('\n')
        .filter((line) => line.includes('"msg":"listening"'))
        .map((line) => JSON.parse(line) as { service: string; metricsUrl?: string });
      assert.deepEqual(
        lines.map((line) => line.service),
        ['todo', 'bank'],
      );
      for (const [index, line] of lines.entries()) {
        const api = started.urls[index] as string;
        const metrics = new URL(line.metricsUrl ?? '');
        assert.notEqual(metrics.port, new URL(api).port);
        assert.equal(
          (await get(api, '/metrics')).status,
          404,
          `${line.service}: not on the API port`,
        );
        const scrape = await get(metrics.origin, '/metrics');
        assert.equal(scrape.status, 200);
        assert.match(scrape.text, new RegExp(`http_requests_total\\{service="${line.service}"`));
        assert.equal(
          (await get(metrics.origin, '/todos/1')).status,
          404,
          'the metrics address serves nothing else',
        );
      }
    } finally {
      await started.kill('SIGTERM');
    }
  });

  test('--help prints the usage and exits 0', async () => {
    const result = await run(['--help']);
    assert.equal(result.code, 0);
    assert.match(result.stdout, /Usage: node dist\/cli\.js \[all\|todo\|bank\]/);
  });

  test('"all" starts the to-do service and the bank', async () => {
    const started = await startServiceProcess(['all', '--db', 'memory', '--log-level', 'info'], 2);
    try {
      const [todo, bank] = started.urls as [string, string];
      assert.equal((await get(todo, '/todos/1')).status, 200);
      assert.equal((await get(bank, '/accounts/alice')).status, 200);
    } finally {
      await started.kill('SIGTERM');
    }
  });

  test('SIGTERM stops the service with exit code 0', async () => {
    const started = await startServiceProcess(['todo', '--db', 'memory']);
    await started.kill('SIGTERM');
    assert.equal(await started.exited, 0);
  });

  test('on SIGTERM a request already in flight is finished before the process exits 0', async () => {
    const started = await startServiceProcess(['todo', '--db', 'memory']);
    const target = new URL(started.urls[0] as string);
    const body = '{"title":"in flight"}';
    const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
      // Expect: 100-continue makes the server say when it has the request in hand: only then is
      // the request in flight, and only then comes SIGTERM; the body follows once the process
      // has logged that it is shutting down.
      const req = request(
        {
          host: target.hostname,
          port: target.port,
          method: 'POST',
          path: '/todos',
          headers: {
            'Content-Type': 'application/json',
            'Content-Length': body.length,
            Expect: '100-continue',
          },
        },
        (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
      req.once('continue', () => {
        req.write(body.slice(0, 5));
        process.kill(started.pid, 'SIGTERM');
        void started.logged('shutting down').then(() => req.end(body.slice(5)));
      });
      req.flushHeaders();
    });
    const res = await answer;
    assert.equal(res.status, 201);
    assert.deepEqual(JSON.parse(res.text), { id: 2, title: 'in flight', done: false });
    assert.equal(await started.exited, 0);
  });

  test('the SQLite store survives a restart, and the initial data is written only into an empty database', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cli-test-'));
    const args = ['todo', '--db', `sqlite:${join(dir, 'todo.sqlite')}`];
    try {
      const first = await startServiceProcess(args);
      const url = first.urls[0] as string;
      assert.equal((await postJson(url, '/todos', '{"title":"kept"}')).status, 201);
      assert.equal((await send(url, { method: 'DELETE', path: '/todos/1' })).status, 204);
      await first.kill('SIGTERM');
      assert.equal(await first.exited, 0);

      const second = await startServiceProcess(args);
      const again = second.urls[0] as string;
      assert.deepEqual(json(await get(again, '/todos/2')), { id: 2, title: 'kept', done: false });
      assert.equal(
        (await get(again, '/todos/1')).status,
        404,
        'the deleted initial item does not come back',
      );
      await second.kill('SIGTERM');
      assert.equal(await second.exited, 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('/healthz says the process lives; /readyz says the SQLite file is there and answers', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cli-test-'));
    try {
      const started = await startServiceProcess([
        'bank',
        '--db',
        `sqlite:${join(dir, 'bank.sqlite')}`,
      ]);
      const url = started.urls[0] as string;
      assert.deepEqual(json(await get(url, '/readyz')), { status: 'ready' });
      rmSync(join(dir, 'bank.sqlite'));
      const notReady = await get(url, '/readyz');
      assert.equal(notReady.status, 503);
      assert.deepEqual(json(notReady), { detail: 'Service Unavailable' });
      assert.equal((await get(url, '/healthz')).status, 200);
      await started.kill('SIGTERM');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('--accounts sets the initial accounts of the bank', async () => {
    const started = await startServiceProcess([
      'bank',
      '--db',
      'memory',
      '--accounts',
      'carol=7,dave=0',
    ]);
    try {
      const url = started.urls[0] as string;
      assert.deepEqual(json(await get(url, '/accounts/carol')), { account: 'carol', balance: 7 });
      assert.equal((await get(url, '/accounts/alice')).status, 404);
    } finally {
      await started.kill('SIGTERM');
    }
  });
});
