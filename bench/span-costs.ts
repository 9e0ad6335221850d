// What each way of recording and encoding a request's span costs, alone, on the instruction ruler
// (issue 51: what was tried for a sampled request). One process makes `--spans` SERVER spans like
// the service's (the same attributes, an end, a route), one way, after as many to warm up; run
// under callgrind twice, with the spans and without (`--spans 0`), the difference over the spans is
// the cost of one, every thread. The ways:
//   sdk-span       the SDK's tracer: startSpan with the attributes, setAttribute, updateName, end
//   our-span       a RecordedSpan (src/features/tracing/recorded-span.ts), the same steps
//   sdk-protobuf   our spans encoded by the SDK's ProtobufTraceSerializer, 512 a request
//   our-protobuf   the same spans by our encoder (otlp-protobuf.ts) as they end, 512 a request
//   sdk-json       the same spans by the SDK's JsonTraceSerializer (the http/json protocol)
//   worker-copy    the same spans as plain data copied to a worker thread and read there (what
//                  handing them to the SDK's exporter in a worker costs before it encodes them)
//
//   npm run bench:span-costs                      every way under callgrind: a table of instructions a span
//   node .build/bench/span-costs.js --way our-protobuf --spans 20000   one way, natively
import { SpanKind, type Attributes } from '@opentelemetry/api';
import { ProtobufTraceSerializer, JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  type ReadableSpan,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { RecordedSpan, type SpanOrigin } from '../src/features/tracing/recorded-span.js';
import { ProtobufBatches } from '../src/features/tracing/span-batches.js';

const WAYS = [
  'sdk-span',
  'our-span',
  'sdk-protobuf',
  'our-protobuf',
  'sdk-json',
  'worker-copy',
] as const;
type Way = (typeof WAYS)[number];
const BATCH = 512;

const origin: SpanOrigin = {
  resource: resourceFromAttributes({ 'service.name': 'todo' }),
  scope: { name: 'status-services' },
};

/** The attributes of a GET /todos/1 span, as request-attributes.ts makes them. */
function attributes(i: number): Attributes {
  return {
    'http.request.method': 'GET',
    'url.path': '/todos/1',
    'url.scheme': 'http',
    'network.protocol.version': '1.1',
    'http.response.header.x-request-id': [`0d6c3f9e-7a4b-4c1e-9f3a-${String(i).padStart(12, '0')}`],
    'client.address': '127.0.0.1',
    'user_agent.original': 'autocannon/8.0.0',
    'server.address': '127.0.0.1',
    'server.port': 8000,
  };
}

const hex = (i: number, digits: number): string => i.toString(16).padStart(digits, '0');

function ourSpan(i: number): RecordedSpan {
  const span = new RecordedSpan(
    'GET',
    SpanKind.SERVER,
    { traceId: hex(i + 1, 32), spanId: hex(i + 1, 16), traceFlags: 3 },
    undefined,
    attributes(i),
    origin,
  );
  span.setAttribute('http.response.status_code', 200);
  span.setAttribute('http.route', '/todos/{todo_id}');
  span.name = 'GET /todos/{todo_id}';
  span.end();
  return span;
}

function sdkSpans(): (i: number) => void {
  const drop: SpanProcessor = {
    onStart: () => undefined,
    onEnd: () => undefined,
    forceFlush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
  };
  const tracer = new BasicTracerProvider({ spanProcessors: [drop] }).getTracer('status-services');
  return (i) => {
    const span = tracer.startSpan('GET', { kind: SpanKind.SERVER, attributes: attributes(i) });
    span.setAttribute('http.response.status_code', 200);
    span.setAttribute('http.route', '/todos/{todo_id}');
    span.updateName('GET /todos/{todo_id}');
    span.end();
  };
}

/** A span as plain data, as it would be posted to a worker (a ReadableSpan's methods do not cross). */
function plain(span: ReadableSpan): unknown {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return {
    traceId,
    spanId,
    traceFlags,
    name: span.name,
    kind: span.kind,
    startTime: span.startTime,
    endTime: span.endTime,
    attributes: span.attributes,
    status: span.status,
  };
}

/** Makes `count` spans the given way, in batches of 512 where a way exports. */
async function run(way: Way, count: number, first: number): Promise<void> {
  if (way === 'sdk-span') {
    const make = sdkSpans();
    for (let i = 0; i < count; i++) make(first + i);
    return;
  }
  if (way === 'our-span') {
    for (let i = 0; i < count; i++) ourSpan(first + i);
    return;
  }
  if (way === 'our-protobuf') {
    const batches = new ProtobufBatches(origin);
    for (let i = 0; i < count; i++) {
      batches.add(ourSpan(first + i));
      if (batches.count === BATCH) batches.take(BATCH);
    }
    if (batches.count > 0) batches.take(batches.count);
    return;
  }
  let held: ReadableSpan[] = [];
  const worker = way === 'worker-copy' ? readingWorker() : undefined;
  for (let i = 0; i < count; i++) {
    held.push(ourSpan(first + i));
    if (held.length === BATCH || i === count - 1) {
      if (way === 'sdk-protobuf') ProtobufTraceSerializer.serializeRequest(held);
      else if (way === 'sdk-json') JsonTraceSerializer.serializeRequest(held);
      else if (worker !== undefined) await worker.read(held.map(plain));
      held = [];
    }
  }
  await worker?.stop();
}

function readingWorker(): { read(spans: unknown[]): Promise<void>; stop(): Promise<number> } {
  const worker = new Worker(
    "const { parentPort } = require('node:worker_threads'); parentPort.on('message', (spans) => parentPort.postMessage(spans.length));",
    { eval: true },
  );
  return {
    read: (spans) =>
      new Promise((resolve) => {
        worker.once('message', () => resolve());
        worker.postMessage(spans);
      }),
    stop: () => worker.terminate(),
  };
}

/** Every instruction of a run of this script under callgrind, every thread (valgrind's own summary line). */
function countedRun(way: Way, spans: number, warmup: number): number {
  const result = spawnSync(
    'valgrind',
    [
      '--tool=callgrind',
      '--callgrind-out-file=/dev/null',
      process.execPath,
      fileURLToPath(import.meta.url),
      '--way',
      way,
      '--spans',
      String(spans),
      '--warmup',
      String(warmup),
    ],
    { encoding: 'utf8' },
  );
  const collected = /Collected : (\d+)/.exec(result.stderr);
  if (result.status !== 0 || collected === null)
    throw new Error(`${way}: valgrind failed: ${result.stderr.slice(-500)}`);
  return Number(collected[1]);
}

const { values } = parseArgs({
  options: {
    way: { type: 'string' },
    spans: { type: 'string', default: '20000' },
    warmup: { type: 'string', default: '20000' },
  },
});
const spans = Number(values.spans);
const warmup = Number(values.warmup);
if (values.way === undefined) {
  process.stdout.write(`| Way | Instructions a span |\n|---|---:|\n`);
  for (const way of WAYS) {
    const each = (countedRun(way, spans, warmup) - countedRun(way, 0, warmup)) / spans;
    process.stdout.write(`| ${way} | ${(each / 1000).toFixed(1)}k |\n`);
  }
} else {
  const way = values.way as Way;
  if (!WAYS.includes(way)) throw new Error(`--way must be one of ${WAYS.join(', ')}`);
  await run(way, warmup, 0);
  await run(way, spans, warmup);
}
