// The answers node:http's parser gives before a request reaches the pipeline
// (src/http/connections/parser-responses.ts), on real servers over raw sockets: each carries an X-Request-Id and
// a body in the active format, closes the connection, and writes one access line with that id; a
// flood of them is logged within a bound; a request that times out is logged as the 408 it got.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { createRequestHandler } from '../../src/http/app.js';
import { pipelineStages } from '../../src/http/stages/pipeline-stages.js';
import { parseCorsOrigins, type CorsPolicy } from '../../src/features/cors/cors.js';
import {
  PARSER_LINES_PER_SECOND_MAX,
  respondToParserErrors,
} from '../../src/http/connections/parser-responses.js';
import { defineRoute } from '../../src/http/route.js';
import { RequestObserver } from '../../src/http/request-observer.js';
import { createLogger } from '../../src/observe/log.js';
import { todoIn } from '../../src/todo/model.js';
import { get } from '../support/http.js';
import { startTestServer } from '../support/server.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

/** Writes `bytes` on a new connection and resolves with everything the server sent before closing it. */
function exchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
  });
}

interface Answer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

function parse(raw: string): Answer {
  const [head = '', body = ''] = raw.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [
      line.slice(0, line.indexOf(':')).toLowerCase(),
      line.slice(line.indexOf(':') + 1).trim(),
    ]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}

const accessLines = (lines: readonly string[]): { status: number; requestId: string }[] =>
  lines
    .filter((line) => line.includes('"msg":"request"'))
    .map((line) => JSON.parse(line) as { status: number; requestId: string });

describe("the parser's own answers", { timeout: SUITE_TIMEOUT_MS }, () => {
  const cases: [string, string, number][] = [
    ['a request line that is not HTTP', 'HELLO\r\n\r\n', 400],
    ['a bare CR inside a header', 'GET /todos/1 HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n', 400],
    [
      'headers past the size limit',
      `GET /todos/1 HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      431,
    ],
    [
      'an Expect other than 100-continue',
      'POST /todos HTTP/1.1\r\nHost: x\r\nExpect: tea\r\nContent-Length: 0\r\n\r\n',
      417,
    ],
  ];
  for (const [what, bytes, status] of cases) {
    test(`${what}: ${status} with an X-Request-Id, a body in the active format, Connection: close and one access line`, async () => {
      for (const errors of ['default', 'problem'] as const) {
        const lines: string[] = [];
        const server = await startTestServer({ service: 'todo', errors, logLines: lines });
        try {
          const answer = parse(await exchange(server.port, bytes));
          assert.equal(answer.status, status, `${errors}: ${what}`);
          assert.match(answer.headers['x-request-id'] ?? '', /^[0-9a-f-]{36}$/);
          assert.equal(answer.headers.connection, 'close');
          const body = JSON.parse(answer.body) as Record<string, unknown>;
          if (errors === 'default') assert.equal(typeof body.detail, 'string');
          else
            assert.deepEqual(
              [answer.headers['content-type'], body.status, body.code],
              ['application/problem+json', status, `HTTP_${status}`],
            );
          assert.deepEqual(
            accessLines(lines).map((line) => [line.status, line.requestId]),
            [[status, answer.headers['x-request-id']]],
          );
        } finally {
          await server.close();
        }
      }
    });
  }

  // A chunked body the parser cannot read fails after the request reached the pipeline: it is still
  // answered 400, as Node answers it, not with a bare close.
  const head =
    'POST /todos HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n';
  const framing: [string, string][] = [
    ['a chunk size that is not hex', 'zz\r\n{}\r\n0\r\n\r\n'],
    ['a chunk size past 64 bits', 'fffffffffffffffffffff\r\n{}\r\n0\r\n\r\n'],
    ['a negative chunk size', '-2\r\n{}\r\n0\r\n\r\n'],
    ['chunk data longer than its size', '1\r\n{}\r\n0\r\n\r\n'],
    ['a chunk not ended by CRLF', '2\r\n{}XX0\r\n\r\n'],
    ['a control byte in a chunk extension', '2;\x01\r\n{}\r\n0\r\n\r\n'],
    ['a trailer that is not a field', '2\r\n{}\r\n0\r\n: no name\r\n\r\n'],
  ];
  for (const [what, body] of framing) {
    test(`${what}: 400 with an X-Request-Id, the body in the active format and one access line, not a bare close`, async () => {
      const lines: string[] = [];
      const server = await startTestServer({ service: 'todo', errors: 'unified', logLines: lines });
      try {
        const raw = await exchange(server.port, head + body);
        const answer = parse(raw);
        assert.equal(answer.status, 400, JSON.stringify(raw));
        assert.match(answer.headers['x-request-id'] ?? '', /^[0-9a-f-]{36}$/);
        assert.equal(answer.headers.connection, 'close');
        assert.deepEqual(JSON.parse(answer.body), {
          error: {
            code: 'HTTP_400',
            message: 'Bad Request: the request line or a header could not be read',
          },
        });
        await new Promise((resolve) => setTimeout(resolve, 100));
        assert.deepEqual(
          accessLines(lines).map((line) => [line.status, line.requestId]),
          [[400, answer.headers['x-request-id']]],
          'one line, not a 499 beside it',
        );
        assert.equal((await get(server.url, '/todos/2')).status, 404, 'nothing was created');
      } finally {
        await server.close();
      }
    });
  }

  test('the parser’s answers carry the CORS headers of a listed origin, and only of a listed one', async () => {
    const origin = 'http://127.0.0.1:5173';
    const server = await startTestServer({
      service: 'todo',
      cors: parseCorsOrigins(origin) as CorsPolicy,
    });
    try {
      const requests: [string, number][] = [
        [
          `GET /todos/1 HTTP/1.1\r\nHost: x\r\nOrigin: ${origin}\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
          431,
        ],
        [`GET /todos/1 HTTP/1.1\r\nHost: x\r\nOrigin: ${origin}\r\nX-A: a\rb\r\n\r\n`, 400],
        [
          `POST /todos HTTP/1.1\r\nHost: x\r\nOrigin: ${origin}\r\nExpect: tea\r\nContent-Length: 0\r\n\r\n`,
          417,
        ],
        [`${head.replace('Host: x\r\n', `Host: x\r\nOrigin: ${origin}\r\n`)}zz\r\n\r\n`, 400],
      ];
      for (const [bytes, status] of requests) {
        const answer = parse(await exchange(server.port, bytes));
        assert.equal(answer.status, status);
        assert.equal(answer.headers['access-control-allow-origin'], origin, `${status}`);
        assert.equal(answer.headers['access-control-expose-headers'], '*');
        assert.equal(answer.headers.vary, 'Origin');
        const other = parse(
          await exchange(server.port, bytes.replace(origin, 'http://127.0.0.1:9999')),
        );
        assert.equal(other.status, status);
        assert.equal(
          other.headers['access-control-allow-origin'],
          undefined,
          `${status} to an unlisted origin`,
        );
        assert.equal(other.headers.vary, 'Origin');
      }
    } finally {
      await server.close();
    }
  });

  test(`a flood of unreadable requests writes at most ${PARSER_LINES_PER_SECOND_MAX} access lines a second, and then one warning that counts the rest`, async () => {
    const lines: string[] = [];
    const server = await startTestServer({ service: 'todo', logLines: lines });
    try {
      await Promise.all(
        Array.from({ length: PARSER_LINES_PER_SECOND_MAX + 15 }, () =>
          exchange(server.port, 'HELLO\r\n\r\n'),
        ),
      );
      assert.equal(accessLines(lines).length, PARSER_LINES_PER_SECOND_MAX);
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      await exchange(server.port, 'HELLO\r\n\r\n');
      const warnings = lines
        .filter((line) => line.includes('parser-level answers not logged one by one'))
        .map((line) => JSON.parse(line) as { count: number });
      assert.deepEqual(
        warnings.map((warning) => warning.count),
        [15],
      );
      assert.equal(accessLines(lines).length, PARSER_LINES_PER_SECOND_MAX + 1);
    } finally {
      await server.close();
    }
  });

  test('a body that does not arrive in time is answered 408 with an X-Request-Id and logged as 408, not as 499', async () => {
    const lines: string[] = [];
    const log = createLogger('info', (line) => lines.push(line));
    const observer = new RequestObserver({ log, accessLog: true });
    const errorFormat = { name: 'default', catchAll: false } as const;
    const echo = defineRoute({
      method: 'PUT',
      path: '/echo',
      status: 200,
      params: {},
      body: todoIn,
      docs: { name: 'echo' },
      handle: () => ({ status: 200, body: '{}' }),
    });
    const pipeline = pipelineStages({
      routes: [echo],
      errorFormat,
      limits: { bodyBytesMax: 1024, nestingDepthMax: 8 },
      stages: [],
    });
    const handler = createRequestHandler({
      pipeline,
      errorFormat,
      log,
      observer,
      shutdown: { started: false },
    });
    const server = createServer(
      { requestTimeout: 1_000, headersTimeout: 1_000, connectionsCheckingInterval: 100 },
      handler,
    );
    respondToParserErrors(server, {
      errorFormat,
      observer,
      warn: (message, fields) => log.warn(message, fields),
      stages: pipeline.stages,
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const raw = await exchange(
        (server.address() as AddressInfo).port,
        'PUT /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{',
      );
      const answer = parse(raw);
      assert.equal(answer.status, 408);
      assert.deepEqual(JSON.parse(answer.body), { detail: 'Request Timeout' });
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.deepEqual(
        accessLines(lines).map((line) => [line.status, line.requestId]),
        [[408, answer.headers['x-request-id']]],
      );
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
