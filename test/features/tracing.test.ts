// OpenTelemetry traces (docs/operating.md#traces), end to end: the service runs as a process with
// tracing on, and a real OTLP/HTTP receiver started here decodes what it exports, by the official
// protobuf definitions and by the JSON mapping.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { startReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { postgresSkip, withTestDatabase } from '../support/postgres.js';
import { startServiceProcess } from '../support/service-process.js';
import {
  dropped,
  get,
  QUICK_EXPORT,
  serverSpans,
  spanFor,
  spanOf,
  withTraced,
} from '../support/traced-service.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';

test('a request whose traceparent is valid continues that trace: its span is the child of the caller, with its tracestate', async () => {
  await withTraced([], {}, async (url, receiver) => {
    const { status, requestId } = await get(`${url}/todos/1`, {
      traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`,
      tracestate: 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7',
    });
    assert.equal(status, 200);
    const span = await spanOf(receiver, requestId);
    assert.equal(span.traceId, TRACE_ID);
    assert.equal(span.parentSpanId, PARENT_ID);
    assert.equal(span.traceState, 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7');
    assert.equal(span.name, 'GET /todos/{todo_id}');
    assert.equal(span.contentType, 'application/x-protobuf');
  });
});

test('a request without traceparent starts a new trace, with the HTTP semantic conventions on its SERVER span', async () => {
  await withTraced(
    [],
    {
      OTEL_SERVICE_NAME: 'todo-under-test',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test,team=a%20b',
    },
    async (url, receiver) => {
      const { requestId } = await get(`${url}/todos/1?token=secret`, {
        'user-agent': 'trace-test/1.0',
      });
      const span = await spanOf(receiver, requestId);
      assert.match(span.traceId, /^[0-9a-f]{32}$/);
      assert.notEqual(span.traceId, TRACE_ID);
      assert.equal(span.parentSpanId, '');
      const port = Number(new URL(url).port);
      assert.deepEqual(span.attributes, {
        'http.request.method': 'GET',
        'url.path': '/todos/1',
        // Every value is redacted, the key kept (tracing-conventions.test.ts).
        'url.query': 'token=REDACTED',
        'url.scheme': 'http',
        'network.protocol.version': '1.1',
        'http.response.header.x-request-id': [requestId],
        'client.address': '127.0.0.1',
        'user_agent.original': 'trace-test/1.0',
        'server.address': '127.0.0.1',
        'server.port': port,
        'http.response.status_code': 200,
        'http.route': '/todos/{todo_id}',
      });
      // A 4xx is the client's: no error on a server span.
      assert.equal(span.statusCode, 0);
      // Sampled and random (our trace ids are: W3C Level 2), of no remote parent.
      assert.equal(span.flags, 0x100 | 0x03);
      assert.equal(span.resource['service.name'], 'todo-under-test');
      assert.equal(span.resource['deployment.environment.name'], 'test');
      assert.equal(span.resource.team, 'a b');
    },
  );
});

/** The W3C trace-context test suite's malformed or unsupported traceparent values: each is ignored, and a new trace starts. */
const MALFORMED_TRACEPARENTS: readonly string[] = [
  `ff-${TRACE_ID}-${PARENT_ID}-01`, // version ff is forbidden
  `00-00000000000000000000000000000000-${PARENT_ID}-01`, // all-zero trace id
  `00-${TRACE_ID}-0000000000000000-01`, // all-zero parent id
  `00-${TRACE_ID.toUpperCase()}-${PARENT_ID}-01`, // upper-case hex
  `00-${TRACE_ID}-${PARENT_ID.toUpperCase()}-01`,
  `00-${TRACE_ID.slice(1)}-${PARENT_ID}-01`, // trace id too short
  `00-${TRACE_ID}0-${PARENT_ID}-01`, // trace id too long
  `00-${TRACE_ID}-${PARENT_ID.slice(1)}-01`, // parent id too short
  `00-${TRACE_ID}-${PARENT_ID}0-01`,
  `00-${TRACE_ID}-${PARENT_ID}-1`, // flags too short
  `00-${TRACE_ID}-${PARENT_ID}-011`,
  `00-${TRACE_ID}-${PARENT_ID}-01-extra`, // version 00 has exactly four fields
  `00-${TRACE_ID}-${PARENT_ID}-01.`,
  `0-${TRACE_ID}-${PARENT_ID}-01`, // version too short
  `00-${TRACE_ID.slice(0, -1)}g-${PARENT_ID}-01`, // not hex
  `00_${TRACE_ID}_${PARENT_ID}_01`, // wrong separators
  `00-${TRACE_ID}-${PARENT_ID}`, // no flags
  '',
  'garbage',
];

test("malformed traceparent headers (the W3C test suite's cases) are ignored: the request is answered as usual and a new trace starts", async () => {
  await withTraced([], {}, async (url, receiver) => {
    for (const traceparent of MALFORMED_TRACEPARENTS) {
      const { status, requestId } = await get(`${url}/todos/1`, {
        traceparent,
        tracestate: 'rojo=00f067aa0ba902b7',
      });
      assert.equal(status, 200, traceparent);
      const span = await spanOf(receiver, requestId);
      assert.notEqual(span.traceId, TRACE_ID, traceparent);
      assert.equal(span.parentSpanId, '', traceparent);
      assert.equal(span.traceState, '', traceparent);
    }
    // A later version's traceparent is read by its first four fields, as the specification asks.
    const { requestId } = await get(`${url}/todos/1`, {
      traceparent: `cc-${TRACE_ID}-${PARENT_ID}-01-what-the-future-will-be-like`,
    });
    const future = await spanOf(receiver, requestId);
    assert.equal(future.traceId, TRACE_ID);
    assert.equal(future.parentSpanId, PARENT_ID);
  });
});

test('the sampled flag is honoured (parent-based by default), and OTEL_TRACES_SAMPLER chooses another sampler', async () => {
  await withTraced([], {}, async (url, receiver) => {
    const unsampled = await get(`${url}/todos/1`, {
      traceparent: `00-${TRACE_ID}-${PARENT_ID}-00`,
    });
    const sampled = await get(`${url}/todos/1`, { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` });
    await spanOf(receiver, sampled.requestId);
    assert.equal(spanFor(receiver.spans, unsampled.requestId), undefined);
  });
  await withTraced([], { OTEL_TRACES_SAMPLER: 'always_on' }, async (url, receiver) => {
    const unsampledParent = await get(`${url}/todos/1`, {
      traceparent: `00-${TRACE_ID}-${PARENT_ID}-00`,
    });
    assert.equal((await spanOf(receiver, unsampledParent.requestId)).traceId, TRACE_ID);
  });
  await withTraced(
    [],
    { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' },
    async (url, receiver) => {
      const none = await get(`${url}/todos/1`);
      const marker = await fetch(`${url}/todos/1`, {
        headers: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` },
      });
      await marker.arrayBuffer();
      // traceidratio ignores the parent: with a ratio of 0 nothing is sampled, so nothing arrives.
      await new Promise((resolve) => setTimeout(resolve, 400));
      assert.equal(spanFor(receiver.spans, none.requestId), undefined);
      assert.equal(serverSpans(receiver.spans).length, 0);
    },
  );
});

const FORMATS = ['default', 'unified', 'problem'] as const;

for (const format of FORMATS) {
  test(`spans carry status, route, error.type and refusals in the ${format} error format`, async () => {
    await withTraced(
      ['--errors', format, '--rate-limit', 'reads=1/s:2'],
      {},
      async (url, receiver) => {
        const unmatched = await get(`${url}/nowhere`);
        const invalid = await fetch(`${url}/todos`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"done":true}',
        });
        await invalid.arrayBuffer();
        const invalidId = invalid.headers.get('x-request-id') as string;
        // The burst of 2 lets two reads through; the next is refused.
        let refused = await get(`${url}/todos/1`);
        for (let i = 0; i < 5 && refused.status !== 429; i++) refused = await get(`${url}/todos/1`);
        assert.equal(refused.status, 429);

        const notFound = await spanOf(receiver, unmatched.requestId);
        assert.equal(notFound.name, 'GET');
        assert.equal(notFound.attributes['http.route'], undefined);
        assert.equal(notFound.attributes['http.response.status_code'], 404);
        const unprocessable = await spanOf(receiver, invalidId);
        assert.equal(unprocessable.name, 'POST /todos');
        assert.equal(unprocessable.attributes['http.response.status_code'], 422);
        assert.equal(unprocessable.attributes['error.type'], undefined);
        assert.equal(unprocessable.statusCode, 0);
        const tooMany = await spanOf(receiver, refused.requestId);
        assert.equal(tooMany.attributes['http.response.status_code'], 429);
        assert.equal(tooMany.statusCode, 0);
        assert.deepEqual(
          tooMany.events.map((event) => [
            event.name,
            event.attributes['http.response.status_code'],
          ]),
          [['request.refused', 429]],
        );
      },
    );
  });

  test(`a 5xx sets error.type and the ERROR status, and the error line carries trace_id and span_id (${format} format)`, async () => {
    const receiver = await startReceiver();
    const service = await startServiceProcess(
      ['bank', '--otel-endpoint', receiver.url, '--db', 'memory', '--errors', format],
      1,
      { env: QUICK_EXPORT },
    );
    try {
      const url = service.urls[0] as string;
      // The bank's /crash is an unhandled failure: a 500 in every format.
      const response = await fetch(`${url}/crash`);
      await response.arrayBuffer();
      assert.equal(response.status, 500);
      const requestId = response.headers.get('x-request-id') as string;
      const span = await spanOf(receiver, requestId);
      assert.equal(span.name, 'GET /crash');
      assert.equal(span.attributes['http.response.status_code'], 500);
      assert.equal(span.statusCode, 2);
      // The docs' word for a failure of ours: the catalogue's code its answer carries.
      assert.equal(span.attributes['error.type'], 'INTERNAL');
      await service.kill();
      const lines = service
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((line) => line.requestId === requestId);
      const access = lines.find((line) => line.msg === 'request');
      assert.equal(access?.trace_id, span.traceId);
      assert.equal(access?.span_id, span.spanId);
      for (const line of lines) {
        assert.equal(line.trace_id, span.traceId, String(line.msg));
        assert.equal(line.span_id, span.spanId, String(line.msg));
      }
      assert.ok(lines.some((line) => line.msg === 'unhandled failure'));
    } finally {
      await service.kill();
      await receiver.close();
    }
  });
}

test('OTEL_EXPORTER_OTLP_PROTOCOL=http/json sends the same spans by the OTLP/JSON mapping', async () => {
  await withTraced([], { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }, async (url, receiver) => {
    const { requestId } = await get(`${url}/todos/999`, {
      traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`,
    });
    const span = await spanOf(receiver, requestId);
    assert.equal(span.contentType, 'application/json');
    assert.equal(span.traceId, TRACE_ID);
    assert.equal(span.parentSpanId, PARENT_ID);
    assert.equal(span.name, 'GET /todos/{todo_id}');
    assert.equal(span.attributes['http.response.status_code'], 404);
  });
});

/** A store span under its request: the child of the request's SERVER span, with the database's words. */
function storeSpanUnder(
  spans: readonly ReceivedSpan[],
  request: ReceivedSpan,
): ReceivedSpan | undefined {
  return spans.find(
    (span) =>
      span.kind === 3 && span.parentSpanId === request.spanId && span.traceId === request.traceId,
  );
}

/** What a store's spans must say of its database, by the database conventions. */
interface StoreSpanWords {
  readonly system: string;
  readonly namespace: string;
  /** The table of an unkeyed write, when a write changes one table only. */
  readonly writeTable: string | undefined;
  /** PostgreSQL: the server the URL names. */
  readonly server: { readonly address: string; readonly port: number } | undefined;
  readonly reads: boolean;
}

/** The conventions' attributes a store span carries beside its operation. */
function assertDatabaseWords(
  span: ReceivedSpan,
  words: StoreSpanWords,
  table: string | undefined,
): void {
  assert.equal(span.attributes['db.system.name'], words.system);
  assert.equal(span.attributes['db.namespace'], words.namespace);
  assert.equal(span.attributes['db.collection.name'], table);
  assert.equal(span.attributes['server.address'], words.server?.address);
  assert.equal(span.attributes['server.port'], words.server?.port);
  // {db.operation.name} {target}: the table, else the database.
  assert.equal(
    span.name,
    `${String(span.attributes['db.operation.name'])} ${table ?? words.namespace}`,
  );
}

async function checkStoreSpans(args: readonly string[], words: StoreSpanWords): Promise<void> {
  const receiver = await startReceiver();
  const service = await startServiceProcess(['--otel-endpoint', receiver.url, ...args], 1, {
    env: QUICK_EXPORT,
  });
  try {
    const url = service.urls[0] as string;
    const created = await fetch(`${url}/todos`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"title":"Trace me"}',
    });
    const { id } = (await created.json()) as { id: number };
    const write = await spanOf(receiver, created.headers.get('x-request-id') as string);
    const writeSpans = await receiver.waitFor(
      (spans) => storeSpanUnder(spans, write) !== undefined,
    );
    const batch = storeSpanUnder(writeSpans, write) as ReceivedSpan;
    assert.equal(batch.attributes['db.operation.name'], 'BATCH');
    assert.equal(batch.attributes['db.operation.batch.size'], undefined);
    assertDatabaseWords(batch, words, words.writeTable);
    // A keyed write changes the keys' table too: no one table.
    const keyed = await fetch(`${url}/todos`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': `trace-${id}` },
      body: '{"title":"Keyed"}',
    });
    await keyed.arrayBuffer();
    const keyedSpan = await spanOf(receiver, keyed.headers.get('x-request-id') as string);
    const keyedSpans = await receiver.waitFor(
      (spans) => storeSpanUnder(spans, keyedSpan) !== undefined,
    );
    assertDatabaseWords(storeSpanUnder(keyedSpans, keyedSpan) as ReceivedSpan, words, undefined);
    if (words.reads) {
      const read = await get(`${url}/todos/${id}`);
      const readSpan = await spanOf(receiver, read.requestId);
      const readSpans = await receiver.waitFor(
        (spans) => storeSpanUnder(spans, readSpan) !== undefined,
      );
      const select = storeSpanUnder(readSpans, readSpan) as ReceivedSpan;
      assert.equal(select.attributes['db.operation.name'], 'SELECT');
      assertDatabaseWords(select, words, 'todos');
    }
    // Writes sent together share a batch: one span, its size, the child of one request and linked
    // to the others (and they to it).
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        fetch(`${url}/todos`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: `{"title":"Batch ${i}"}`,
        }),
      ),
    );
    await Promise.all(responses.map((response) => response.arrayBuffer()));
    const ids = responses.map((response) => response.headers.get('x-request-id') as string);
    const spans = await receiver.waitFor(
      (all) =>
        ids.every((rid) => spanFor(all, rid) !== undefined) &&
        all.some((s) => s.kind === 3 && Number(s.attributes['db.operation.batch.size']) > 1),
    );
    const shared = spans.find(
      (s) => s.kind === 3 && Number(s.attributes['db.operation.batch.size']) > 1,
    ) as ReceivedSpan;
    const parent = serverSpans(spans).find((s) => s.spanId === shared.parentSpanId);
    assert.ok(parent !== undefined, 'the batch span is the child of a request span');
    assert.ok(
      ids.includes(
        (parent.attributes['http.response.header.x-request-id'] as string[])[0] as string,
      ),
      'of one of the requests it served',
    );
    assert.equal(shared.links.length, Number(shared.attributes['db.operation.batch.size']) - 1);
    for (const link of shared.links) {
      const linked = serverSpans(spans).find((s) => s.spanId === link.spanId) as ReceivedSpan;
      assert.ok(linked !== undefined);
      assert.ok(linked.links.some((back) => back.spanId === shared.spanId));
    }
  } finally {
    await service.kill();
    await receiver.close();
  }
}

test('store work is a child span of its request on SQLite, named and described as the database conventions say: a group-committed batch, its size and its links', async () => {
  const { mkdtempSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const dir = mkdtempSync(`${tmpdir()}/otel-`);
  // SQLite names the database a connection opens `main`; every write changes two tables.
  await checkStoreSpans(['--db', `sqlite:${dir}/todo.sqlite`], {
    system: 'sqlite',
    namespace: 'main',
    writeTable: undefined,
    server: undefined,
    reads: false,
  });
});

test('store work is a child span of its request on PostgreSQL, named and described as the database conventions say (namespace, table, server): a batched SELECT and a group-committed batch', async (t) => {
  const skip = await postgresSkip();
  if (skip !== false) return t.skip(skip);
  await withTestDatabase(async (database) => {
    const url = new URL(database.url);
    await checkStoreSpans(['--db', database.url], {
      system: 'postgresql',
      namespace: url.pathname.slice(1),
      writeTable: 'todos',
      server: { address: url.hostname, port: Number(url.port || 5432) },
      reads: true,
    });
  });
});

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test('a collector that is down delays no request: its spans are dropped and counted on /metrics', async () => {
  const port = await closedPort();
  const service = await startServiceProcess(
    ['--otel-endpoint', `http://127.0.0.1:${port}`, '--db', 'memory'],
    1,
    { env: { ...QUICK_EXPORT, OTEL_EXPORTER_OTLP_TIMEOUT: '200' } },
  );
  try {
    const url = service.urls[0] as string;
    const started = performance.now();
    for (let i = 0; i < 200; i++) assert.equal((await get(`${url}/todos/1`)).status, 200);
    const elapsedMs = performance.now() - started;
    assert.ok(elapsedMs < 5_000, `200 requests took ${Math.round(elapsedMs)} ms`);
    const deadline = Date.now() + 10_000;
    while ((await dropped(url, 'export_failed')) < 1 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    assert.ok((await dropped(url, 'export_failed')) >= 1);
  } finally {
    await service.kill();
  }
});

test('a collector that never answers: the queue stays bounded (OTEL_BSP_MAX_QUEUE_SIZE), the rest is dropped and counted, and requests stay fast', async () => {
  const receiver = await startReceiver({ behaviour: 'hang' });
  const service = await startServiceProcess(
    ['--otel-endpoint', receiver.url, '--db', 'memory'],
    1,
    {
      env: {
        ...QUICK_EXPORT,
        OTEL_BSP_MAX_QUEUE_SIZE: '10',
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '5',
        OTEL_BSP_EXPORT_TIMEOUT: '30000',
        OTEL_EXPORTER_OTLP_TIMEOUT: '30000',
      },
    },
  );
  try {
    const url = service.urls[0] as string;
    const started = performance.now();
    for (let i = 0; i < 100; i++) assert.equal((await get(`${url}/todos/1`)).status, 200);
    assert.ok(performance.now() - started < 5_000);
    // One batch of 5 is out (stuck), 10 wait: of 100, at least 85 were dropped.
    assert.ok((await dropped(url, 'queue_full')) >= 85, String(await dropped(url, 'queue_full')));
  } finally {
    await service.kill();
    await receiver.close();
  }
});

test("the queue's bound counts the spans waiting, not those ever queued: a collector that keeps up receives many times the bound", async () => {
  // A bound of 10 spans: six rounds of 5 requests, each round's spans received before the next.
  await withTraced(
    [],
    { OTEL_BSP_MAX_QUEUE_SIZE: '10', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '5' },
    async (url, receiver) => {
      for (let round = 0; round < 6; round++) {
        const ids: string[] = [];
        for (let i = 0; i < 5; i++) ids.push((await get(`${url}/todos/1`)).requestId);
        await receiver.waitFor(
          (spans) => ids.every((id) => spanFor(spans, id) !== undefined),
          5_000,
        );
      }
      assert.equal(serverSpans(receiver.spans).length, 30);
      assert.equal(await dropped(url, 'queue_full'), 0);
    },
  );
});

test('a full batch leaves at once, without waiting for the scheduled export', async () => {
  // The schedule would send nothing for a minute: only a full batch (OTEL_BSP_MAX_EXPORT_BATCH_SIZE) goes now.
  await withTraced(
    [],
    { OTEL_BSP_SCHEDULE_DELAY: '60000', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '5' },
    async (url, receiver) => {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await get(`${url}/todos/1`)).requestId);
      await receiver.waitFor((spans) => ids.every((id) => spanFor(spans, id) !== undefined), 5_000);
    },
  );
});

test('shutdown exports the spans still queued, and a stuck collector holds the exit no longer than its bound', async () => {
  const receiver = await startReceiver();
  // Spans would wait a minute for the next scheduled export: only the shutdown's flush sends them.
  const service = await startServiceProcess(
    ['--otel-endpoint', receiver.url, '--db', 'memory'],
    1,
    { env: { OTEL_BSP_SCHEDULE_DELAY: '60000' } },
  );
  const { requestId } = await get(`${service.urls[0] as string}/todos/1`);
  await service.kill();
  assert.equal(await service.exited, 0);
  assert.ok(
    spanFor(receiver.spans, requestId) !== undefined,
    'the span arrived before the process exited',
  );
  await receiver.close();

  const stuck = await startReceiver({ behaviour: 'hang' });
  const held = await startServiceProcess(['--otel-endpoint', stuck.url, '--db', 'memory'], 1, {
    env: {
      OTEL_BSP_SCHEDULE_DELAY: '60000',
      OTEL_EXPORTER_OTLP_TIMEOUT: '60000',
      OTEL_BSP_EXPORT_TIMEOUT: '60000',
    },
  });
  await get(`${held.urls[0] as string}/todos/1`);
  const stopping = performance.now();
  await held.kill();
  const exitMs = performance.now() - stopping;
  assert.ok(exitMs < 8_000, `exit took ${Math.round(exitMs)} ms`);
  await stuck.close();
});

test('with tracing off (no endpoint), no part of the OpenTelemetry SDK is loaded', async () => {
  // Every CommonJS module loaded (the SDK's packages are CommonJS) is in require.cache; the process
  // counts those of OpenTelemetry as it exits. The API package (@opentelemetry/api) is not the SDK:
  // prom-client loads it in any case, for its exemplars.
  const probe = `data:text/javascript,${encodeURIComponent(
    "import { createRequire } from 'node:module'; const cache = createRequire(process.execPath).cache; process.on('exit', () => process.stderr.write('otel-modules:' + Object.keys(cache).filter((k) => k.includes('/@opentelemetry/') && !k.includes('/@opentelemetry/api/')).length + '\\n'));",
  )}`;
  for (const [args, expected] of [
    [[], 'otel-modules:0'],
    [['--otel-endpoint', 'http://127.0.0.1:1'], undefined],
  ] as const) {
    const service = await startServiceProcess(['--db', 'memory', ...args], 1, {
      nodeOptions: ['--import', probe],
    });
    await service.kill();
    const line = /otel-modules:\d+/.exec(service.output())?.[0];
    if (expected !== undefined) assert.equal(line, expected);
    else assert.notEqual(line, 'otel-modules:0', 'the probe sees the SDK when tracing is on');
  }
});

test('with tracing on, every operation of /openapi.json declares the traceparent and tracestate request headers it reads; off, none does', async () => {
  const readHeaders = async (url: string): Promise<string[][]> => {
    const document = (await (await fetch(`${url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { parameters?: { in: string; name: string }[] }>>;
    };
    return Object.values(document.paths).flatMap((item) =>
      Object.values(item).map((operation) =>
        (operation.parameters ?? [])
          .filter((p) => p.in === 'header')
          .map((p) => p.name.toLowerCase()),
      ),
    );
  };
  await withTraced([], {}, async (url) => {
    const operations = await readHeaders(url);
    assert.ok(operations.length > 0);
    for (const names of operations)
      assert.ok(names.includes('traceparent') && names.includes('tracestate'), names.join(', '));
  });
  const untraced = await startServiceProcess(['--db', 'memory'], 1);
  try {
    for (const names of await readHeaders(untraced.urls[0] as string))
      assert.ok(!names.includes('traceparent') && !names.includes('tracestate'), names.join(', '));
  } finally {
    await untraced.kill();
  }
});
