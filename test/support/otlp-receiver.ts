// A real OTLP/HTTP trace receiver for the tests: it takes POSTs at /v1/traces as a collector does,
// decodes protobuf bodies with the code the OpenTelemetry project generated from its official
// .proto definitions (opentelemetry-proto, as shipped in @opentelemetry/otlp-transformer 0.57, here
// under the name otlp-official-protos) and JSON bodies by the OTLP/JSON mapping (ids as hex, enums
// as integers, 64-bit integers as strings or numbers), and keeps every span in one plain shape.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

interface ProtoType {
  decode(bytes: Uint8Array): unknown;
  toObject(message: unknown, options: Record<string, unknown>): unknown;
}
const root = require('otlp-official-protos/build/src/generated/root.js') as {
  opentelemetry: {
    proto: { collector: { trace: { v1: { ExportTraceServiceRequest: ProtoType } } } };
  };
};
const ExportTraceServiceRequest =
  root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

export type AttributeValue = string | number | boolean | readonly AttributeValue[] | undefined;

export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** '' for a root span. */
  readonly parentSpanId: string;
  readonly traceState: string;
  readonly name: string;
  /** The OTLP enum: 1 internal, 2 server, 3 client. */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, AttributeValue>>;
  /** The OTLP status code: 0 unset, 1 ok, 2 error. */
  readonly statusCode: number;
  readonly events: readonly {
    readonly name: string;
    readonly attributes: Readonly<Record<string, AttributeValue>>;
  }[];
  readonly links: readonly { readonly traceId: string; readonly spanId: string }[];
  /** OTLP's span flags: the W3C trace flags in the low byte, 0x100 and 0x200 for a remote parent. */
  readonly flags: number;
  readonly resource: Readonly<Record<string, AttributeValue>>;
  /** How it came: application/x-protobuf or application/json. */
  readonly contentType: string;
}

export interface Receiver {
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** Requests received, whatever their answer. */
  readonly requests: number;
  /** When each request arrived (performance.now()), in order. */
  readonly arrivals: readonly number[];
  /** Resolves with the spans once `predicate` holds for them (checked on each export), or rejects after `timeoutMs`. */
  waitFor(
    predicate: (spans: readonly ReceivedSpan[]) => boolean,
    timeoutMs?: number,
  ): Promise<readonly ReceivedSpan[]>;
  close(): Promise<void>;
}

export interface ReceiverOptions {
  /** 'hang': take the request and never answer (a collector that is stuck). */
  readonly behaviour?: 'ok' | 'hang';
  /** The first `requests` exports are answered `status` (429 or 503, say), with this Retry-After if given, and their spans not kept. */
  readonly busy?: {
    readonly status: number;
    readonly retryAfter?: string;
    readonly requests: number;
  };
}

/** The OTLP/JSON AnyValue, or the protobuf one made plain by toObject: one of its fields is set. */
type AnyValue = {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: AnyValue[] };
};
type KeyValue = { key: string; value?: AnyValue };

function plainValue(value: AnyValue | undefined): AttributeValue {
  if (value === undefined) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(plainValue);
  return undefined;
}

function plainAttributes(list: KeyValue[] | undefined): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const { key, value } of list ?? []) out[key] = plainValue(value);
  return out;
}

interface RawSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  traceState?: string;
  name: string;
  kind: number;
  attributes?: KeyValue[];
  status?: { code?: number };
  events?: { name: string; attributes?: KeyValue[] }[];
  links?: { traceId: string; spanId: string }[];
  flags?: number;
}
interface RawRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: { spans?: RawSpan[] }[];
  }[];
}

/** Both encodings to one shape. Protobuf's bytes come out as hex by the `bytes` conversion below. */
function spansOf(request: RawRequest, contentType: string): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of request.resourceSpans ?? []) {
    const resource = plainAttributes(resourceSpans.resource?.attributes);
    for (const scope of resourceSpans.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        spans.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? '',
          traceState: span.traceState ?? '',
          name: span.name,
          kind: span.kind,
          attributes: plainAttributes(span.attributes),
          statusCode: span.status?.code ?? 0,
          events: (span.events ?? []).map((event) => ({
            name: event.name,
            attributes: plainAttributes(event.attributes),
          })),
          links: (span.links ?? []).map((link) => ({ traceId: link.traceId, spanId: link.spanId })),
          flags: span.flags ?? 0,
          resource,
          contentType,
        });
      }
    }
  }
  return spans;
}

const hex = (bytes: unknown): string => Buffer.from(bytes as Uint8Array).toString('hex');

/**
 * Each span's `flags` (Span field 16, fixed32), in wire order. The definitions shipped with the
 * package above predate the field (opentelemetry-proto 1.1 added it), so it is read from the wire
 * here: request field 1 (ResourceSpans), its field 2 (ScopeSpans), its field 2 (Span).
 */
function spanFlags(body: Buffer): number[] {
  const flags: number[] = [];
  const fields = (bytes: Buffer, visit: (field: number, value: Buffer | number) => void): void => {
    let at = 0;
    const varint = (): number => {
      let value = 0;
      for (let shift = 0; ; shift += 7) {
        const byte = bytes[at++] as number;
        value += (byte & 0x7f) * 2 ** shift;
        if (byte < 0x80) return value;
      }
    };
    while (at < bytes.length) {
      const key = varint();
      const wire = key & 7;
      if (wire === 0) visit(key >>> 3, varint());
      else if (wire === 1) at += 8;
      else if (wire === 5) {
        visit(key >>> 3, bytes.readUInt32LE(at));
        at += 4;
      } else if (wire === 2) {
        const length = varint();
        visit(key >>> 3, bytes.subarray(at, at + length));
        at += length;
      } else throw new Error(`wire type ${wire} in an OTLP request`);
    }
  };
  const inside =
    (field: number, then: (bytes: Buffer) => void) => (f: number, v: Buffer | number) => {
      if (f === field && Buffer.isBuffer(v)) then(v);
    };
  fields(
    body,
    inside(1, (resourceSpans) =>
      fields(
        resourceSpans,
        inside(2, (scopeSpans) =>
          fields(
            scopeSpans,
            inside(2, (span) => {
              let value = 0;
              fields(span, (f, v) => {
                if (f === 16 && typeof v === 'number') value = v;
              });
              flags.push(value);
            }),
          ),
        ),
      ),
    ),
  );
  return flags;
}

function decode(body: Buffer, contentType: string): ReceivedSpan[] {
  if (contentType.startsWith('application/json'))
    return spansOf(JSON.parse(body.toString('utf8')) as RawRequest, 'application/json');
  if (!contentType.startsWith('application/x-protobuf'))
    throw new Error(`unexpected content type ${contentType}`);
  const message = ExportTraceServiceRequest.decode(body);
  const object = ExportTraceServiceRequest.toObject(message, {
    longs: String,
    enums: Number,
    bytes: Array,
    defaults: false,
    arrays: true,
  }) as RawRequest;
  // Ids are bytes on the wire: hex, as the JSON mapping writes them.
  const flags = spanFlags(body);
  for (const resourceSpans of object.resourceSpans ?? []) {
    for (const scope of resourceSpans.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        span.flags = flags.shift();
        span.traceId = hex(span.traceId);
        span.spanId = hex(span.spanId);
        span.parentSpanId = span.parentSpanId === undefined ? '' : hex(span.parentSpanId);
        for (const link of span.links ?? []) {
          link.traceId = hex(link.traceId);
          link.spanId = hex(link.spanId);
        }
      }
    }
  }
  return spansOf(object, 'application/x-protobuf');
}

export async function startReceiver(options: ReceiverOptions = {}): Promise<Receiver> {
  const spans: ReceivedSpan[] = [];
  const waiters = new Set<() => void>();
  let requests = 0;
  const arrivals: number[] = [];
  const held: ServerResponse[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    requests += 1;
    arrivals.push(performance.now());
    const busy = options.busy !== undefined && requests <= options.busy.requests;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (options.behaviour === 'hang') {
        held.push(res);
        return;
      }
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      if (busy && options.busy !== undefined) {
        const { status, retryAfter } = options.busy;
        res.writeHead(status, retryAfter === undefined ? {} : { 'retry-after': retryAfter }).end();
        return;
      }
      try {
        spans.push(...decode(Buffer.concat(chunks), req.headers['content-type'] ?? ''));
      } catch (error) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end(String(error));
        return;
      }
      const json = (req.headers['content-type'] ?? '').startsWith('application/json');
      res
        .writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' })
        .end(json ? '{}' : '');
      for (const wake of waiters) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    get requests() {
      return requests;
    },
    arrivals,
    waitFor(predicate, timeoutMs = 10_000) {
      if (predicate(spans)) return Promise.resolve(spans);
      return new Promise((resolve, reject) => {
        const wake = (): void => {
          if (!predicate(spans)) return;
          clearTimeout(timer);
          waiters.delete(wake);
          resolve(spans);
        };
        const timer = setTimeout(() => {
          waiters.delete(wake);
          reject(
            new Error(
              `the receiver did not get the spans awaited within ${timeoutMs} ms; it has ${spans.length}: ${spans.map((s) => s.name).join(', ')}`,
            ),
          );
        }, timeoutMs);
        waiters.add(wake);
      });
    },
    close() {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
