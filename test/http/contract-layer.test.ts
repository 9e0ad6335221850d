// The HTTP contract layer on its own: a real server with routes that know nothing of to-dos or
// money, one test per rule the layer promises (shared/DESIGN.md and the contract's general rules).
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { describe, test } from 'node:test';
import { ECHO_CHARS_MAX, type ErrorFormat } from '../../src/http/render.js';
import { defineRoute, jsonReply, type Reply, type Route } from '../../src/http/route.js';
import { boolField, intParam, model, strField } from '../../src/http/validation/schema.js';
import type { ServiceDefinition } from '../../src/http/service.js';
import { createLogger } from '../../src/observe/log.js';
import { BODY_LIMITS, CONNECTION_TIMEOUTS, startServer } from '../../src/server.js';
import { get, json, pick, postJson, send, type RawResponse } from '../support/http.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

const SECRET = 'password=swordfish';
const UNSENDABLE_HEADERS = { 'Set-Cookie': `session=${SECRET}`, 'X-Note': 'line\r\nbreak' };
const thing = model('Thing', { name: strField('Name'), ok: boolField('Ok', false) });
const n = intParam({ title: 'N', ge: -10, le: 10 });

function routes(calls: string[]): Route[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/things/{n}',
      status: 200,
      params: { n },
      docs: { name: 'read_thing', example: '{"n":1}' },
      handle: ({ params }) => jsonReply(200, JSON.stringify({ n: params.n })),
    }),
    defineRoute({
      // Its parameters declared in the other order than the path names them.
      method: 'GET',
      path: '/pairs/{first}/{second}',
      status: 200,
      params: { second: n, first: n },
      docs: { name: 'read_pair', example: '{"first":1,"second":2}' },
      handle: ({ params }) =>
        jsonReply(200, JSON.stringify({ first: params.first, second: params.second })),
    }),
    defineRoute({
      method: 'PUT',
      path: '/things/{n}',
      status: 200,
      params: { n },
      body: thing,
      docs: { name: 'put_thing', example: '{"n":1,"name":"x","ok":false}' },
      handle: ({ params, body }) => jsonReply(200, JSON.stringify({ n: params.n, ...body })),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/things/{n}',
      status: 204,
      params: { n },
      docs: { name: 'delete_thing' },
      handle: () => ({ status: 204, body: '{"a value":"that must not be sent"}' }),
    }),
    defineRoute({
      method: 'POST',
      path: '/things',
      status: 201,
      params: {},
      body: thing,
      docs: { name: 'create_thing', example: '{"name":"x","ok":false}' },
      handle: ({ body }) => {
        calls.push(body.name);
        return jsonReply(201, JSON.stringify(body));
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/own-headers',
      status: 200,
      params: {},
      docs: { name: 'own headers', example: '{}' },
      handle: () => ({
        status: 200,
        body: '{}',
        headers: {
          'content-type': 'text/html',
          'Content-Length': '999',
          'X-REQUEST-ID': 'forged',
          'X-Own': 'kept',
        },
      }),
    }),
    defineRoute({
      method: 'GET',
      path: '/unsendable',
      status: 200,
      params: {},
      docs: { name: 'unsendable', example: '{}' },
      // A valid header, then one node:http refuses to write (a line break would split the header).
      handle: () => ({ status: 200, body: '{}', headers: UNSENDABLE_HEADERS }),
    }),
    defineRoute({
      method: 'GET',
      path: '/boom',
      status: 200,
      params: {},
      docs: { name: 'boom', succeeds: false },
      handle: () => {
        throw new Error(`internal detail ${SECRET}`);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/boom-without-error',
      status: 200,
      params: {},
      docs: { name: 'boom without error', succeeds: false },
      // What a careless library can do: reject with nothing at all.
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- that is the case tested
      handle: () => Promise.reject(undefined),
    }),
  ];
}

interface Layer {
  readonly url: string;
  readonly calls: string[];
  readonly logs: string[];
}

async function withLayer(
  format: ErrorFormat,
  body: (layer: Layer) => Promise<void>,
): Promise<void> {
  const calls: string[] = [];
  const logs: string[] = [];
  const service: ServiceDefinition = {
    title: 'Layer test',
    version: '0',
    routes: routes(calls),
    components: {},
    ready: () => Promise.resolve(true),
    close: () => Promise.resolve(),
  };
  const server = await startServer(service, {
    host: '127.0.0.1',
    port: 0,
    errorFormat: format,
    log: createLogger('info', (line) => logs.push(line)),
    service: 'things',
  });
  try {
    await body({ url: server.url, calls, logs });
  } finally {
    await server.close();
  }
}
const DEFAULT: ErrorFormat = { name: 'default', catchAll: false };
const UNIFIED: ErrorFormat = { name: 'unified', catchAll: false };
const layerTest = (name: string, body: (layer: Layer) => Promise<void>, format = DEFAULT): void => {
  test(name, () => withLayer(format, body));
};
/**
 * Sends the requests (method and path) pipelined in one write on one kept-alive connection, and
 * returns what came back once `done` says so, the server closed, or the keep-alive time ran out.
 */
async function pipelined(
  url: string,
  requests: readonly string[],
  done: (received: string) => boolean,
): Promise<string> {
  const socket = connect(Number(new URL(url).port), '127.0.0.1');
  socket.on('error', () => undefined); // a reset shows as a missing answer in the text
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
  socket.write(requests.map((request) => `${request} HTTP/1.1\r\nHost: x\r\n\r\n`).join(''));
  const deadline = performance.now() + CONNECTION_TIMEOUTS.keepAliveTimeout;
  while (!done(text) && performance.now() < deadline && !socket.readableEnded)
    await new Promise((resolve) => setTimeout(resolve, 10));
  socket.destroy();
  return text;
}
const detail = (res: RawResponse): unknown => (json(res) as { detail: unknown }).detail;
const post = (url: string, body: string | Buffer, contentType?: string): Promise<RawResponse> =>
  send(url, {
    method: 'POST',
    path: '/things',
    headers: contentType === undefined ? [] : [['Content-Type', contentType]],
    body,
  });

describe('routing rules', { timeout: SUITE_TIMEOUT_MS }, () => {
  layerTest(
    'an unknown path is 404 {"detail":"Not Found"}, whatever the method',
    async ({ url }) => {
      for (const method of ['GET', 'POST', 'PATCH', 'DELETE']) {
        const res = await send(url, { method, path: '/nothing/here' });
        assert.equal(res.status, 404);
        assert.equal(res.text, '{"detail":"Not Found"}');
        assert.equal(res.headers['content-type'], 'application/json');
      }
    },
  );

  layerTest(
    'a known path with a method it lacks is 405, Allow listing every method of the path and HEAD beside GET (D3)',
    async ({ url }) => {
      const res = await send(url, { method: 'PATCH', path: '/things/1' });
      assert.equal(res.status, 405);
      assert.deepEqual(json(res), { detail: 'Method Not Allowed' });
      assert.equal(res.headers.allow, 'GET, HEAD, PUT, DELETE');
      assert.equal((await send(url, { method: 'GET', path: '/things' })).headers.allow, 'POST');
    },
  );

  layerTest(
    'each path parameter takes the value of its own placeholder, and their 422 items come in the order the route declares them',
    async ({ url }) => {
      assert.deepEqual(json(await get(url, '/pairs/1/2')), { first: 1, second: 2 });
      const res = await get(url, '/pairs/x/y');
      assert.equal(res.status, 422);
      assert.deepEqual(
        (detail(res) as { loc: unknown; input: unknown }[]).map(({ loc, input }) => ({
          loc,
          input,
        })),
        [
          { loc: ['path', 'second'], input: 'y' },
          { loc: ['path', 'first'], input: 'x' },
        ],
      );
    },
  );

  layerTest('405 is decided before validation', async ({ url }) => {
    assert.equal((await send(url, { method: 'PATCH', path: '/things/abc' })).status, 405);
  });

  layerTest(
    'HEAD on a GET route gives the status and headers GET would give, without a body (D4)',
    async ({ url }) => {
      for (const path of ['/things/1', '/things/99', '/things/abc', '/boom']) {
        const full = await get(url, path);
        const head = await send(url, { method: 'HEAD', path });
        assert.equal(head.status, full.status, path);
        assert.equal(head.headers['content-type'], full.headers['content-type'], path);
        assert.equal(head.headers['content-length'], String(full.body.length), path);
        assert.equal(head.body.length, 0, path);
      }
    },
  );

  layerTest(
    'a trailing slash redirects 307 to the path without it, query kept, Location relative, nothing executed (D9)',
    async ({ url, calls }) => {
      const res = await send(url, {
        method: 'POST',
        path: '/things/?x=%2F&y',
        headers: [['Content-Type', 'application/json']],
        body: '{"name":"n"}',
      });
      assert.equal(res.status, 307);
      assert.equal(res.headers.location, '/things?x=%2F&y');
      assert.equal(res.body.length, 0);
      assert.deepEqual(calls, []);
      assert.equal((await get(url, '/things/1//')).headers.location, '/things/1');
    },
  );

  layerTest('a trailing slash on a path that reaches nothing is a plain 404', async ({ url }) => {
    assert.equal((await get(url, '/nothing/')).status, 404);
  });

  layerTest('%2F inside a segment is data, not a separator (D8)', async ({ url }) => {
    const res = await get(url, '/things/1%2F');
    assert.equal(res.status, 422);
    assert.equal((detail(res) as { input: string }[])[0]?.input, '1/');
    assert.equal((await get(url, '/things%2F1')).status, 404);
  });

  layerTest(
    'an escaped byte order mark stays in the segment: not an int, and no empty segment',
    async ({ url }) => {
      const res = await get(url, '/things/%EF%BB%BF1');
      assert.equal(res.status, 422);
      assert.equal((detail(res) as { input: string }[])[0]?.input, '\uFEFF1');
      const alone = await get(url, '/things/%EF%BB%BF');
      assert.equal(alone.status, 422, 'a segment of a byte order mark only is not empty');
      assert.equal((detail(alone) as { input: string }[])[0]?.input, '\uFEFF');
    },
  );
});

describe('body decoding', { timeout: SUITE_TIMEOUT_MS }, () => {
  layerTest(
    'JSON media types are application/json and application/*+json, in any case, with parameters',
    async ({ url }) => {
      for (const type of [
        'application/json',
        'APPLICATION/JSON',
        'application/json; charset=utf-8',
        'application/vnd.api+json',
      ]) {
        assert.equal((await post(url, '{"name":"x"}', type)).status, 201, type);
      }
    },
  );

  layerTest(
    'another media type, or none, hands the raw text to the model: model_attributes_type',
    async ({ url }) => {
      for (const type of [undefined, 'text/plain', 'application/jsonx', 'text/json', '']) {
        const res = await post(url, '{"name":"x"}', type);
        assert.equal(res.status, 422, String(type));
        assert.deepEqual(detail(res), [
          {
            type: 'model_attributes_type',
            loc: ['body'],
            msg: 'Input should be a valid dictionary or object to extract fields from',
            input: '{"name":"x"}',
          },
        ]);
      }
    },
  );

  layerTest('raw text keeps a leading byte order mark, as Python decodes it', async ({ url }) => {
    const res = await post(url, '\uFEFF{"name":"x"}', 'text/plain');
    assert.equal(res.status, 422);
    assert.equal((detail(res) as { input: string }[])[0]?.input, '\uFEFF{"name":"x"}');
  });

  layerTest(
    'a JSON syntax error is 422 json_invalid at ["body", character offset] with the reference wording',
    async ({ url }) => {
      const res = await post(url, '{"name": "x",}', 'application/json');
      assert.equal(res.status, 422);
      assert.deepEqual(detail(res), [
        {
          type: 'json_invalid',
          loc: ['body', 13],
          msg: 'JSON decode error',
          input: {},
          ctx: { error: 'Expecting property name enclosed in double quotes' },
        },
      ]);
    },
  );

  layerTest('NaN and Infinity are syntax errors at their offset (D6)', async ({ url }) => {
    const res = await post(url, '{"name": "x", "ok": NaN}', 'application/json');
    assert.deepEqual((detail(res) as { loc: unknown[] }[])[0]?.loc, ['body', 20]);
  });

  layerTest('offsets count characters, not bytes or UTF-16 units', async ({ url }) => {
    const res = await post(url, '{"name": "😀é", oops}', 'application/json');
    assert.deepEqual((detail(res) as { loc: unknown[] }[])[0]?.loc, ['body', 15]);
  });

  layerTest('no body, or a JSON null, is missing at ["body"]', async ({ url }) => {
    for (const body of ['', 'null']) {
      assert.deepEqual(detail(await post(url, body, 'application/json')), [
        { type: 'missing', loc: ['body'], msg: 'Field required', input: null },
      ]);
    }
  });

  layerTest(
    'a JSON value that is not an object is model_attributes_type with the value as input',
    async ({ url }) => {
      assert.deepEqual(detail(await post(url, '[1, 2.5]', 'application/json')), [
        {
          type: 'model_attributes_type',
          loc: ['body'],
          msg: 'Input should be a valid dictionary or object to extract fields from',
          input: [1, 2.5],
        },
      ]);
    },
  );

  layerTest(
    'bytes that are not UTF-8 are 400 "There was an error parsing the body"',
    async ({ url }) => {
      const res = await post(
        url,
        Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
        'application/json',
      );
      assert.equal(res.status, 400);
      assert.deepEqual(json(res), { detail: 'There was an error parsing the body' });
    },
  );

  layerTest('nesting beyond the limit is 400, and nothing overflows a stack', async ({ url }) => {
    const deep = `{"name":"x","extra":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    const res = await post(url, deep, 'application/json');
    assert.equal(res.status, 400);
    assert.equal((await get(url, '/things/1')).status, 200);
  });
});

describe('limits at their boundaries', { timeout: SUITE_TIMEOUT_MS }, () => {
  const { bodyBytesMax, nestingDepthMax } = BODY_LIMITS;
  /** A valid Thing whose JSON is exactly `bytes` long. */
  const thingOfBytes = (bytes: number): Buffer => {
    const frame = '{"name":"","ok":true}';
    return Buffer.from(`{"name":"${'x'.repeat(bytes - frame.length)}","ok":true}`);
  };
  const TOO_LARGE_HEADERS = {
    'content-type': 'application/json',
    'content-length': '30',
    connection: 'close',
  };

  for (const chunked of [false, true]) {
    const how = chunked ? 'sent chunked' : 'with its Content-Length';
    layerTest(`a body of exactly 1 MiB is accepted (${how})`, async ({ url, calls }) => {
      const body = thingOfBytes(bodyBytesMax);
      assert.equal(body.length, 1024 * 1024);
      const res = await send(url, {
        method: 'POST',
        path: '/things',
        headers: [['Content-Type', 'application/json']],
        body,
        chunked,
      });
      assert.equal(res.status, 201);
      assert.equal(res.text, body.toString());
      assert.deepEqual(
        calls.map((name) => name.length),
        [bodyBytesMax - 21],
      );
    });

    layerTest(
      `a body of 1 MiB + 1 byte is refused with 413 "Content Too Large", Connection: close, and nothing runs (${how})`,
      async ({ url, calls }) => {
        const res = await send(url, {
          method: 'POST',
          path: '/things',
          headers: [['Content-Type', 'application/json']],
          body: thingOfBytes(bodyBytesMax + 1),
          chunked,
        });
        assert.equal(res.status, 413);
        assert.equal(res.text, '{"detail":"Content Too Large"}');
        assert.deepEqual(pick(res.headers, Object.keys(TOO_LARGE_HEADERS)), TOO_LARGE_HEADERS);
        assert.deepEqual(calls, []);
      },
    );
  }

  layerTest(
    'the 413 is in the unified format when that is active',
    async ({ url }) => {
      const res = await send(url, {
        method: 'POST',
        path: '/things',
        headers: [['Content-Type', 'application/json']],
        body: thingOfBytes(bodyBytesMax + 1),
      });
      assert.equal(res.status, 413);
      assert.equal(res.text, '{"error":{"code":"HTTP_413","message":"Content Too Large"}}');
      assert.equal(res.headers.connection, 'close');
    },
    UNIFIED,
  );

  layerTest(
    'the 413 closes the connection: the server ends the socket at once, with the body still unsent',
    async ({ url }) => {
      const socket = connect(Number(new URL(url).port), '127.0.0.1');
      socket.on('error', () => undefined); // a reset shows as a missing answer below
      const received: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => received.push(chunk));
      socket.write(
        `POST /things HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\nContent-Type: application/json\r\nContent-Length: ${bodyBytesMax + 1}\r\n\r\n`,
      );
      // A server that kept the connection would wait for the body until a timeout, and its shortest
      // timeout (keep-alive) is the bound here: closing at once means long before it.
      try {
        await once(socket, 'end', {
          signal: AbortSignal.timeout(CONNECTION_TIMEOUTS.keepAliveTimeout),
        });
      } catch {
        assert.fail(
          `the connection was still open ${CONNECTION_TIMEOUTS.keepAliveTimeout} ms after the 413`,
        );
      } finally {
        socket.destroy();
      }
      const text = Buffer.concat(received).toString();
      assert.match(text, /^HTTP\/1\.1 413 /);
      assert.match(text, /\r\nConnection: close\r\n/i);
      assert.ok(text.endsWith('\r\n\r\n{"detail":"Content Too Large"}'), text);
    },
  );

  layerTest(
    'an error other than the 413 keeps a kept-alive connection open: the next request on it is answered',
    async ({ url }) => {
      const text = await pipelined(url, ['GET /things/abc', 'GET /things/1'], (received) =>
        /HTTP\/1\.1 200 /.test(received),
      );
      assert.match(text, /^HTTP\/1\.1 422 [^]*\r\nConnection: keep-alive\r\n[^]*HTTP\/1\.1 200 /i);
      assert.doesNotMatch(text, /Connection: close/i);
    },
  );

  layerTest(
    'JSON nested exactly 512 deep is accepted, 513 deep is 400 "There was an error parsing the body"',
    async ({ url, calls }) => {
      // The object itself is the first level; the arrays inside "extra" are the others.
      const nested = (depth: number): string =>
        `{"name":"deep","extra":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
      const accepted = await post(url, nested(nestingDepthMax), 'application/json');
      assert.equal(accepted.status, 201);
      assert.equal(accepted.text, '{"name":"deep","ok":false}');
      const refused = await post(url, nested(nestingDepthMax + 1), 'application/json');
      assert.equal(refused.status, 400);
      assert.equal(refused.text, '{"detail":"There was an error parsing the body"}');
      assert.deepEqual(calls, ['deep']);
    },
  );
});

describe('validation', { timeout: SUITE_TIMEOUT_MS }, () => {
  layerTest(
    'all errors of one request are listed together, path before body, fields in declaration order',
    async ({ url }) => {
      const res = await send(url, {
        method: 'PUT',
        path: '/things/abc',
        headers: [['Content-Type', 'application/json']],
        body: '{"name": 5, "ok": "maybe"}',
      });
      assert.equal(res.status, 422);
      assert.deepEqual(
        (detail(res) as { type: string; loc: unknown[] }[]).map((item) => [item.type, item.loc]),
        [
          ['int_parsing', ['path', 'n']],
          ['string_type', ['body', 'name']],
          ['bool_parsing', ['body', 'ok']],
        ],
      );
    },
  );

  layerTest(
    'an integer outside its bounds is less_than_equal / greater_than_equal with ctx',
    async ({ url }) => {
      assert.deepEqual(detail(await get(url, '/things/11')), [
        {
          type: 'less_than_equal',
          loc: ['path', 'n'],
          msg: 'Input should be less than or equal to 10',
          input: '11',
          ctx: { le: 10 },
        },
      ]);
      assert.equal(
        (detail(await get(url, '/things/-11')) as { type: string }[])[0]?.type,
        'greater_than_equal',
      );
    },
  );

  layerTest(
    'path integers are read as the reference reads them: spaces, +, leading zeros, 1.0, 1_0',
    async ({ url }) => {
      for (const [text, value] of [
        ['%201%20', 1],
        ['+2', 2],
        ['003', 3],
        ['4.0', 4],
        ['1_0', 10],
      ] as const) {
        assert.deepEqual(json(await get(url, `/things/${text}`)), { n: value }, text);
      }
      for (const text of ['1.5', '1e3', '0x1', '%D9%A1', '1__0']) {
        assert.equal((await get(url, `/things/${text}`)).status, 422, text);
      }
    },
  );

  layerTest(
    'a rejected input is echoed whole up to 64 KiB, and cut to that size, keeping its shape, beyond',
    async ({ url }) => {
      const small = { other: 'x'.repeat(1000), list: [1, 2.5, null] };
      assert.deepEqual(detail(await post(url, JSON.stringify(small), 'application/json')), [
        { type: 'missing', loc: ['body', 'name'], msg: 'Field required', input: small },
      ]);
      // Nearly 1 MiB, missing "name" and with a bad "ok": the reference would echo it twice.
      const items = Array.from({ length: 50_000 }, (_, k) => `item ${k}`);
      const big = `{"items": ${JSON.stringify(items)}, "ok": ${JSON.stringify(items.slice(0, 20_000))}}`;
      const res = await post(url, big, 'application/json');
      assert.equal(res.status, 422);
      assert.ok(res.body.length < 2 * 64 * 1024 + 1024, `a 422 of ${res.body.length} bytes`);
      const [missing, notBool] = detail(res) as { type: string; input: unknown }[];
      assert.equal(missing?.type, 'missing');
      const echoed = missing?.input as { items: string[] };
      assert.deepEqual(Object.keys(echoed), ['items']);
      assert.deepEqual(echoed.items, items.slice(0, echoed.items.length));
      // As many whole items as fit in 64 KiB: one more would not.
      const kept = echoed.items.length;
      assert.ok(JSON.stringify(echoed).length <= ECHO_CHARS_MAX, `${kept} items echoed`);
      assert.ok(
        JSON.stringify({ items: items.slice(0, kept + 1) }).length > ECHO_CHARS_MAX,
        `${kept} items echoed`,
      );
      assert.equal(notBool?.type, 'bool_type');
      assert.ok(Array.isArray(notBool.input) && notBool.input.length < 20_000);
    },
  );

  layerTest('a rejected request changes nothing', async ({ url, calls }) => {
    await post(url, '{"name": 1}', 'application/json');
    await post(url, '{"name": "x"', 'application/json');
    assert.deepEqual(calls, []);
  });
});

describe('responses', { timeout: SUITE_TIMEOUT_MS }, () => {
  layerTest(
    'a 204 carries neither a body nor a Content-Type, even when the handler produced a value (D5)',
    async ({ url }) => {
      const res = await send(url, { method: 'DELETE', path: '/things/1' });
      assert.equal(res.status, 204);
      assert.equal(res.body.length, 0);
      assert.equal(res.headers['content-type'], undefined);
      assert.equal(
        res.headers['content-length'],
        undefined,
        'nor a Content-Length, which RFC 9110 forbids on a 204',
      );
    },
  );

  layerTest(
    'an unhandled failure is 500 text/plain "Internal Server Error"; the trace goes to the log with a request id',
    async ({ url, logs }) => {
      const res = await get(url, '/boom');
      assert.equal(res.status, 500);
      assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
      assert.equal(res.text, 'Internal Server Error');
      const entry = JSON.parse(logs.find((line) => line.includes('unhandled failure')) ?? '{}') as {
        requestId?: string;
        error?: { stack?: string };
      };
      assert.match(
        entry.requestId ?? '',
        /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
      );
      assert.equal(
        entry.requestId,
        res.headers['x-request-id'],
        'the id in the log is the one the client got',
      );
      assert.match(entry.error?.stack ?? '', new RegExp(SECRET));
    },
  );

  layerTest(
    'a failure that is not even an Error (a rejection with undefined) is the same 500, logged as an unhandled failure',
    async ({ url, logs }) => {
      const res = await get(url, '/boom-without-error');
      assert.equal(res.status, 500);
      assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
      assert.equal(res.text, 'Internal Server Error');
      const messages = logs
        .map((line) => (JSON.parse(line) as { msg?: string }).msg)
        .filter((msg) => msg !== 'request');
      assert.deepEqual(messages, ['unhandled failure']);
    },
  );

  layerTest(
    'an answer node:http refuses to write is a 500 in the log, and the answers read in the same turn still go out',
    async ({ url, logs }) => {
      // In one packet: all three are read, and their answers written, in one turn.
      const text = await pipelined(
        url,
        ['GET /things/1', 'GET /unsendable', 'GET /things/2'],
        (received) => (received.match(/HTTP\/1\.1 /g) ?? []).length === 3,
      );
      const statuses = [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1]);
      assert.deepEqual(statuses, ['200', '500', '200'], text);
      assert.match(
        text,
        /\r\n\r\n\{"n":1\}HTTP\/1\.1 500 Internal Server Error\r\n[^]*\r\n\r\nInternal Server Error[^]*\{"n":2\}$/,
      );
      assert.doesNotMatch(
        text,
        /swordfish|Set-Cookie/i,
        'nothing of the refused answer reaches the client',
      );
      const entry = JSON.parse(
        logs.find((line) => line.includes('failed to write an answer')) ?? '{}',
      ) as { status?: number; error?: { code?: string } };
      assert.equal(entry.status, 200, 'the log says which answer could not be written');
      assert.equal(entry.error?.code, 'ERR_INVALID_CHAR');
      const accessLines = logs
        .map((line) => JSON.parse(line) as { msg?: string; path?: string; status?: number })
        .filter((line) => line.msg === 'request' && line.path === '/unsendable');
      assert.deepEqual(
        accessLines.map((line) => line.status),
        [500],
        'one access line, with the status the client got',
      );
    },
  );

  /** The answer to a request whose handler returns `reply` once the server has begun to shut down. */
  async function answeredDuringShutdown(reply: Reply): Promise<RawResponse> {
    let arrived!: () => void;
    const handled = new Promise<void>((resolve) => (arrived = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const service: ServiceDefinition = {
      title: 'Layer test',
      version: '0',
      components: {},
      ready: () => Promise.resolve(true),
      close: () => Promise.resolve(),
      routes: [
        defineRoute({
          method: 'GET',
          path: '/later',
          status: 200,
          params: {},
          docs: { name: 'later', example: '{}' },
          handle: async () => {
            arrived();
            await released;
            return reply;
          },
        }),
      ],
    };
    const server = await startServer(service, {
      host: '127.0.0.1',
      port: 0,
      errorFormat: DEFAULT,
      log: createLogger('silent'),
      service: 'things',
    });
    const answer = get(server.url, '/later');
    await handled;
    const closed = server.close();
    release();
    const res = await answer;
    await closed;
    return res;
  }

  test('after shutdown began, an answer node:http refuses is a plain 500 that says Connection: close and carries none of its headers', async () => {
    const res = await answeredDuringShutdown({
      status: 200,
      body: '{}',
      headers: UNSENDABLE_HEADERS,
    });
    assert.equal(res.status, 500);
    assert.equal(res.text, 'Internal Server Error');
    assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(res.headers.connection, 'close');
    assert.equal(
      res.headers['set-cookie'],
      undefined,
      'nothing of the refused answer reaches the client',
    );
  });

  test('after shutdown began, an answer with a Connection header of its own says Connection: close, once', async () => {
    const connectionHeaders: Readonly<Record<string, string>>[] = [
      { Connection: 'close' },
      { Connection: 'keep-alive' },
      { connection: 'Keep-Alive' },
    ];
    for (const headers of connectionHeaders) {
      const res = await answeredDuringShutdown({ status: 200, body: '{}', headers });
      assert.equal(res.status, 200);
      assert.equal(
        res.headers.connection,
        'close',
        `${JSON.stringify(headers)}: one Connection header, and it says close`,
      );
    }
  });

  layerTest(
    "a reply's own Content-Type, Content-Length or X-Request-Id, in any case, does not replace the pipeline's",
    async ({ url }) => {
      const res = await get(url, '/own-headers');
      assert.equal(res.status, 200);
      assert.deepEqual(pick(res.headers, ['content-type', 'content-length', 'x-own']), {
        'content-type': 'application/json',
        'content-length': '2',
        'x-own': 'kept',
      });
      assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    },
  );

  layerTest(
    'an expected error (422, 404, 405) is answered without an "unhandled failure" line',
    async ({ url, logs }) => {
      assert.deepEqual(
        [
          (await get(url, '/things/abc')).status,
          (await get(url, '/nowhere')).status,
          (await send(url, { method: 'PATCH', path: '/things/1' })).status,
        ],
        [422, 404, 405],
      );
      assert.deepEqual(
        logs.filter((line) => line.includes('unhandled failure')),
        [],
      );
    },
  );

  layerTest(
    'the unified format wraps routing errors and keeps their headers',
    async ({ url }) => {
      const notFound = await get(url, '/nothing');
      assert.deepEqual(json(notFound), { error: { code: 'HTTP_404', message: 'Not Found' } });
      const notAllowed = await send(url, { method: 'PATCH', path: '/things/1' });
      assert.deepEqual(json(notAllowed), {
        error: { code: 'HTTP_405', message: 'Method Not Allowed' },
      });
      assert.equal(notAllowed.headers.allow, 'GET, HEAD, PUT, DELETE');
    },
    UNIFIED,
  );

  layerTest(
    'the unified format lists validation failures as fields joined with "."',
    async ({ url }) => {
      const res = await postJson(url, '/things', '{"ok": 3}');
      assert.deepEqual(json(res), {
        error: {
          code: 'VALIDATION_FAILED',
          message: 'Some fields are wrong',
          fields: [
            { field: 'body.name', message: 'Field required' },
            {
              field: 'body.ok',
              message: 'Input should be a valid boolean, unable to interpret input',
            },
          ],
        },
      });
    },
    UNIFIED,
  );
});
