// The OTLP/protobuf encoder of src/features/tracing/otlp-protobuf.ts against the SDK's own
// (@opentelemetry/otlp-transformer's ProtobufTraceSerializer): the same spans give the same bytes,
// byte for byte, whether the SDK's tracer made the spans or ours did, whatever their attributes
// hold, and however the queue cuts them into requests; and the official .proto definitions read
// the result back.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type HrTime,
} from '@opentelemetry/api';
import { TraceState } from '@opentelemetry/core';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { RecordedSpan, type SpanOrigin } from '../../src/features/tracing/recorded-span.js';
import { ProtobufBatches } from '../../src/features/tracing/span-batches.js';
import { parseTraceState } from '../../src/features/tracing/trace-context.js';

const require = createRequire(import.meta.url);
const root = require('otlp-official-protos/build/src/generated/root.js') as {
  opentelemetry: {
    proto: {
      collector: {
        trace: {
          v1: {
            ExportTraceServiceRequest: {
              decode(bytes: Uint8Array): {
                resourceSpans: { scopeSpans: { spans: unknown[] }[] }[];
              };
            };
          };
        };
      };
    };
  };
};
const ExportTraceServiceRequest =
  root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

/** Every kind of value an attribute may hold, and the lengths where a varint length takes more bytes. */
const EVERY_VALUE: Attributes = {
  'a.string': 'GET /todos/{todo_id}',
  'an.empty.string': '',
  'a.long.string': 'x'.repeat(200),
  'a.very.long.string': 'y'.repeat(20_000),
  unicode: 'café – 東京 – 🚀',
  'lone.surrogate': 'a\ud800b',
  'a.small.int': 200,
  zero: 0,
  'a.negative.int': -1,
  'a.large.int': 2 ** 40 + 3,
  'a.large.negative.int': -(2 ** 40) - 3,
  'past.safe': 2 ** 60,
  'int64.min': -(2 ** 63),
  'a.double': 0.25,
  'a.negative.double': -1.5e-7,
  infinity: Infinity,
  'not.a.number': NaN,
  true: true,
  false: false,
  'string.array': ['abc', '', 'é'],
  'number.array': [1, -2, 3.5],
  'bool.array': [true, false],
  'holes.array': ['a', undefined, null],
  'empty.array': [],
  undefined: undefined,
};

const TIMES: readonly HrTime[] = [
  [1_800_000_000, 999_999_999],
  [1_700_000_000, 0],
  [0, 1],
  [2 ** 32 + 5, 7],
];

function sdkSpans(): { spans: ReadableSpan[]; origin: SpanOrigin } {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'encoding-test', 'deployment.id': 7 }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('encoding-test', '1.2.3');
  const remote = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    spanId: '00f067aa0ba902b7',
    traceFlags: 1,
    isRemote: true,
    traceState: new TraceState('congo=t61rcWkgMzE,rojo=00f067aa0ba902b7'),
  });
  const server = tracer.startSpan(
    'GET /todos/{todo_id}',
    { kind: SpanKind.SERVER, attributes: EVERY_VALUE, startTime: TIMES[0] },
    remote,
  );
  server.addEvent('request.refused', { 'http.response.status_code': 429 }, TIMES[1]);
  server.addEvent('no attributes', TIMES[2]);
  server.setStatus({ code: SpanStatusCode.ERROR, message: 'went wrong' });
  const child = tracer.startSpan(
    'BATCH main',
    {
      kind: SpanKind.CLIENT,
      attributes: { 'db.system.name': 'sqlite' },
      links: [{ context: server.spanContext(), attributes: { 'link.kind': 'served' } }],
    },
    trace.setSpan(ROOT_CONTEXT, server),
  );
  child.end(TIMES[3]);
  server.end();
  tracer.startSpan('internal, empty').end();
  const spans = exporter.getFinishedSpans();
  const first = spans[0] as ReadableSpan;
  return { spans, origin: { resource: first.resource, scope: first.instrumentationScope } };
}

function ourSpans(): { spans: ReadableSpan[]; origin: SpanOrigin } {
  const origin: SpanOrigin = {
    resource: resourceFromAttributes({ 'service.name': 'todo', team: 'a b' }),
    scope: { name: 'status-services' },
  };
  const parent = {
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: 'b7ad6b7169203331',
    traceFlags: 3,
    isRemote: true,
  };
  const server = new RecordedSpan(
    'PUT',
    SpanKind.SERVER,
    {
      traceId: parent.traceId,
      spanId: '00f067aa0ba902b7',
      traceFlags: 3,
      traceState: parseTraceState('a@b@c=1, tenant@vendor=x y,k=v'),
    },
    parent,
    { ...EVERY_VALUE },
    origin,
  );
  server.setAttribute('http.response.status_code', 500);
  server.addEvent('request.refused', { 'refusal.code': 'RATE_LIMITED' });
  server.fail();
  const batch = new RecordedSpan(
    'BATCH todos',
    SpanKind.CLIENT,
    { traceId: parent.traceId, spanId: '1111111111111111', traceFlags: 3 },
    server.spanContext(),
    { 'db.system.name': 'postgresql', 'db.operation.batch.size': 20 },
    origin,
  );
  batch.links.push({ context: { ...parent, spanId: '2222222222222222', isRemote: false } });
  server.links.push({ context: batch.spanContext() });
  batch.end();
  server.end();
  const root = new RecordedSpan(
    'GET',
    SpanKind.SERVER,
    { traceId: 'ffffffffffffffffffffffffffffffff', spanId: 'ffffffffffffffff', traceFlags: 3 },
    undefined,
    {},
    origin,
  );
  root.end();
  return { spans: [batch, server, root], origin };
}

function ours(
  origin: SpanOrigin,
  spans: readonly ReadableSpan[],
  cuts: readonly number[],
): Buffer[] {
  const batches = new ProtobufBatches(origin);
  for (const span of spans) batches.add(span);
  return cuts.map((n) => Buffer.from(batches.take(n)));
}

for (const [made, make] of [
  ["the SDK's tracer", sdkSpans],
  ['our tracer', ourSpans],
] as const) {
  test(`spans made by ${made} encode to the SDK serializer's bytes, byte for byte, and the official definitions read them back`, () => {
    const { spans, origin } = make();
    const [body] = ours(origin, spans, [spans.length]);
    const theirs = Buffer.from(ProtobufTraceSerializer.serializeRequest(spans) as Uint8Array);
    assert.equal((body as Buffer).toString('hex'), theirs.toString('hex'));
    const decoded = ExportTraceServiceRequest.decode(body as Buffer);
    assert.equal(decoded.resourceSpans[0]?.scopeSpans[0]?.spans.length, spans.length);
  });

  test(`the queue's requests, however it cuts the spans (${made}), are the SDK serializer's bytes for the same spans`, () => {
    const { spans, origin } = make();
    for (let first = 1; first < spans.length; first++) {
      const [head, rest] = ours(origin, spans, [first, spans.length - first]);
      assert.deepEqual(
        head,
        Buffer.from(ProtobufTraceSerializer.serializeRequest(spans.slice(0, first)) as Uint8Array),
      );
      assert.deepEqual(
        rest,
        Buffer.from(ProtobufTraceSerializer.serializeRequest(spans.slice(first)) as Uint8Array),
      );
    }
  });
}

test('a thousand spans in one request, past every length a varint holds in one or two bytes', () => {
  const { spans, origin } = ourSpans();
  const many = Array.from({ length: 1000 }, (_, i) => spans[i % spans.length] as ReadableSpan);
  const [body] = ours(origin, many, [many.length]);
  assert.ok((body as Buffer).length > 2 ** 21, String((body as Buffer).length));
  assert.deepEqual(body, Buffer.from(ProtobufTraceSerializer.serializeRequest(many) as Uint8Array));
});
