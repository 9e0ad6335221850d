// The logs as an operator's pipeline reads them: pino's JSON lines (numeric level, epoch time,
// pid, hostname, msg) and one access line per request, which says what was asked and answered
// and never what was in a body or a header other than the request id.
import assert from 'node:assert/strict';
import { METHODS } from 'node:http';
import { connect } from 'node:net';
import { hostname } from 'node:os';
import { describe, test } from 'node:test';
import { parseCorsOrigins, type CorsPolicy } from '../../src/features/cors/cors.js';
import { createLogger } from '../../src/observe/log.js';
import { send } from '../support/http.js';
import { FAILURE_TEXT, withFaultyService } from '../support/faulty-service.js';
import { withServer } from '../support/server.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

type Line = Record<string, unknown>;
const parse = (logs: readonly string[]): Line[] => logs.map((line) => JSON.parse(line) as Line);
const accessLines = (logs: readonly string[]): Line[] =>
  parse(logs).filter((line) => line.msg === 'request');

/** The line without what differs from run to run, after checking that it is there and well formed. */
function stable(line: Line): Line {
  const { time, pid, hostname: host, durationMs, requestId, ...rest } = line;
  assert.equal(typeof time, 'number');
  assert.ok(Math.abs((time as number) - Date.now()) < 60_000, 'time is epoch milliseconds');
  assert.equal(pid, process.pid);
  assert.equal(host, hostname());
  assert.equal(typeof durationMs, 'number');
  assert.ok((durationMs as number) >= 0);
  assert.equal(typeof requestId, 'string');
  return rest;
}

describe('access log', { timeout: SUITE_TIMEOUT_MS }, () => {
  test('one line per request at info: service, method, path, route template, status, duration, bytes, request id', async () => {
    const logs: string[] = [];
    await withServer({ service: 'todo', logLines: logs }, async (url) => {
      await send(url, { method: 'GET', path: '/todos/1', headers: [['X-Request-Id', 'line-1']] });
      await send(url, { method: 'GET', path: '/nowhere/at/all' });
      await send(url, { method: 'HEAD', path: '/todos/1' });
    });
    const lines = accessLines(logs);
    assert.equal(lines.length, 3);
    assert.equal(lines[0]?.requestId, 'line-1');
    assert.deepEqual(lines.map(stable), [
      {
        level: 30,
        service: 'todo',
        method: 'GET',
        path: '/todos/1',
        route: '/todos/{todo_id}',
        status: 200,
        bytes: 40,
        msg: 'request',
      },
      {
        level: 30,
        service: 'todo',
        method: 'GET',
        path: '/nowhere/at/all',
        route: 'unmatched',
        status: 404,
        bytes: 22,
        msg: 'request',
      },
      {
        level: 30,
        service: 'todo',
        method: 'HEAD',
        path: '/todos/1',
        route: '/todos/{todo_id}',
        status: 200,
        bytes: 0,
        msg: 'request',
      },
    ]);
  });

  test('a request answered before routing is filed under the template of its path: a preflight, a refused cross-site write', async () => {
    const logs: string[] = [];
    const page = 'https://app.example';
    await withServer(
      { service: 'todo', logLines: logs, cors: parseCorsOrigins(page) as CorsPolicy },
      async (url) => {
        const preflight: [string, string][] = [
          ['Origin', page],
          ['Access-Control-Request-Method', 'PUT'],
        ];
        const crossSite: [string, string][] = [['Sec-Fetch-Site', 'cross-site']];
        const json: [string, string][] = [['Content-Type', 'application/json']];
        const body = '{"title":"x"}';
        assert.equal(
          (await send(url, { method: 'OPTIONS', path: '/todos/1', headers: preflight })).status,
          204,
        );
        for (const path of ['/todos', '/nowhere'])
          assert.equal(
            (await send(url, { method: 'POST', path, headers: [...crossSite, ...json], body }))
              .status,
            403,
            path,
          );
        assert.equal((await send(url, { method: 'DELETE', path: '/todos' })).status, 405);
      },
    );
    assert.deepEqual(
      accessLines(logs).map((line) => [line.method, line.status, line.route]),
      [
        ['OPTIONS', 204, '/todos/{todo_id}'],
        ['POST', 403, '/todos'],
        ['POST', 403, 'unmatched'],
        ['DELETE', 405, 'unmatched'],
      ],
    );
  });

  test('the access line has the bytes pino writes for its fields, an awkward path included', async () => {
    const logs: string[] = [];
    // Quotes and a backslash are what a path can hold that JSON escapes (node:http refuses control
    // characters and bytes beyond ASCII in a request-target).
    const path = '/nowhere/"quoted"\\back/{x}';
    await withServer({ service: 'todo', logLines: logs }, async (url) => {
      assert.equal((await send(url, { method: 'GET', path: `${path}?q=1` })).status, 404);
    });
    const [written] = logs.filter((line) => line.includes('"msg":"request"'));
    const {
      requestId,
      method,
      path: loggedPath,
      route,
      status,
      durationMs,
      bytes,
    } = JSON.parse(written ?? '') as Line;
    assert.equal(loggedPath, path);
    const byPino: string[] = [];
    createLogger('info', (line) => byPino.push(line))
      .child({ service: 'todo' })
      .info('request', { requestId, method, path: loggedPath, route, status, durationMs, bytes });
    const withoutTime = (line: string | undefined): string | undefined =>
      line?.replace(/"time":\d+,/, '');
    assert.equal(withoutTime(written), withoutTime(byPino[0]));
  });

  test('a method node:http does not know is refused by its parser and logged as UNPARSED: every line stays JSON, and no client-made method is logged', async () => {
    const logs: string[] = [];
    const methods = ['G"T', 'GE\\T', 'get', 'FOO', 'M-SEARCH', 'PROPFIND'];
    await withServer({ service: 'todo', logLines: logs }, async (url) => {
      for (const method of methods) {
        const answer = await new Promise<string>((resolve) => {
          const socket = connect(Number(new URL(url).port), '127.0.0.1');
          let text = '';
          socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
          socket.on('error', () => resolve(text));
          socket.on('close', () => resolve(text));
          socket.end(`${method} /todos/1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
        });
        const known = METHODS.includes(method);
        assert.match(answer, known ? /^HTTP\/1\.1 405 / : /^HTTP\/1\.1 400 /, method);
      }
    });
    const lines = parse(logs);
    const logged = lines.filter((line) => line.msg === 'request').map((line) => line.method);
    assert.deepEqual(logged, [
      'UNPARSED',
      'UNPARSED',
      'UNPARSED',
      'UNPARSED',
      'M-SEARCH',
      'PROPFIND',
    ]);
  });

  test('never a body, a query or a header value other than the request id', async () => {
    const logs: string[] = [];
    await withServer({ service: 'todo', logLines: logs }, async (url) => {
      await send(url, {
        method: 'POST',
        path: '/todos?token=query-secret',
        headers: [
          ['Content-Type', 'application/json'],
          ['Authorization', 'Bearer header-secret'],
          ['Cookie', 'cookie-secret'],
          ['User-Agent', 'agent-secret'],
        ],
        body: '{"title":"body-secret"}',
      });
    });
    const [line] = accessLines(logs);
    assert.equal(line?.path, '/todos');
    assert.equal(line?.status, 201);
    for (const secret of [
      'query-secret',
      'header-secret',
      'cookie-secret',
      'agent-secret',
      'body-secret',
    ]) {
      assert.ok(!logs.join('\n').includes(secret), secret);
    }
  });

  test('--log-level warn silences the access line', async () => {
    const logs: string[] = [];
    await withServer({ service: 'todo', logLines: logs, logLevel: 'warn' }, async (url) => {
      await send(url, { method: 'GET', path: '/todos/1' });
    });
    assert.deepEqual(logs, []);
  });

  test('--access-log off turns only the access line off', async () => {
    await withFaultyService({ accessLog: false }, async (url, logs) => {
      assert.equal((await send(url, { method: 'GET', path: '/boom' })).status, 500);
      assert.deepEqual(
        parse(logs).map((line) => line.msg),
        ['unhandled failure'],
      );
    });
  });

  test("a line is pino's: numeric level (50 for an error), epoch time, pid, hostname, msg", async () => {
    await withFaultyService({}, async (url, logs) => {
      await send(url, { method: 'GET', path: '/boom', headers: [['X-Request-Id', 'shape']] });
      const failure = parse(logs).find((line) => line.msg === 'unhandled failure');
      const { error, ...rest } = failure ?? {};
      assert.equal((error as { message?: unknown }).message, FAILURE_TEXT);
      assert.deepEqual(stable({ ...rest, durationMs: 0 }), {
        level: 50,
        service: 'faulty',
        method: 'GET',
        url: '/boom',
        msg: 'unhandled failure',
      });
    });
  });
});
