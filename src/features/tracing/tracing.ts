// Tracing with the OpenTelemetry JS SDK, loaded only when tracing is on (cli.ts imports this module
// dynamically): one SERVER span per request, a span per store batch, exported over OTLP/HTTP by the
// SDK's batch span processor.
//
// A collector that is down or slow never reaches a request: spans are handed to a queue of at most
// OTEL_BSP_MAX_QUEUE_SIZE spans (the processor exports from it in the background, one batch at a
// time, each within OTEL_BSP_EXPORT_TIMEOUT); a span that finds the queue full is dropped and
// counted, as is every span of an export that failed (otel_spans_dropped_total on /metrics).
// The queue is bounded here, in front of the SDK's own processor, because the SDK counts its drops
// in a private field: the count kept here is the queue's length exactly (spans handed in, less
// spans handed to the exporter), so this bound is met first and the SDK's is never reached.
import {
  defaultTextMapGetter,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';
import {
  ExportResultCode,
  W3CTraceContextPropagator,
  type ExportResult,
} from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type ReadableSpan,
  type Sampler,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import {
  ATTR_CLIENT_ADDRESS,
  ATTR_DB_OPERATION_BATCH_SIZE,
  ATTR_DB_OPERATION_NAME,
  ATTR_DB_SYSTEM_NAME,
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_REQUEST_METHOD_ORIGINAL,
  ATTR_HTTP_RESPONSE_HEADER,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_NETWORK_PROTOCOL_VERSION,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_SERVICE_NAME,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
  ATTR_USER_AGENT_ORIGINAL,
} from '@opentelemetry/semantic-conventions';
import type { IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import { Counter, type Registry } from 'prom-client';
import type { BatchWork, StoreObserver } from '../../db/store-observer.js';
import type { Logger } from '../../observe/log.js';
import type { TracingConfig } from './options.js';
import type { RequestTrace, RequestTracer } from './request-trace.js';

/** Shutdown waits this long at most for the last spans to reach the collector. */
export const SHUTDOWN_FLUSH_MS_MAX = 5_000;

/** The refusals a request may meet on its way (rate limit, preconditions, shedding or a store fault, deadline): an event on its span. */
const REFUSALS: ReadonlySet<number> = new Set([412, 428, 429, 503, 504]);

/** Every response carries the request's id in X-Request-Id (src/http/request-id.ts): its attribute, by the conventions' name for a response header. */
const REQUEST_ID_ATTRIBUTE = ATTR_HTTP_RESPONSE_HEADER('x-request-id');

/** The methods the semantic conventions name; any other is reported as _OTHER, beside its own name. */
const KNOWN_METHODS: ReadonlySet<string> = new Set([
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'DELETE',
  'CONNECT',
  'OPTIONS',
  'TRACE',
  'PATCH',
  'QUERY',
]);

export interface TracingSetup {
  /** The service's own name (todo, bank): service.name unless OTEL_SERVICE_NAME names another. */
  readonly service: string;
  /** Where the drop counters go (the service's /metrics); none: not counted. */
  readonly registry: Registry | undefined;
  readonly log: Logger;
}

export interface Tracing {
  readonly requests: RequestTracer;
  /** The store's side: joins the store's observer (src/db/store-observer.ts). */
  readonly batchStarted: NonNullable<StoreObserver['batchStarted']>;
  /** Exports what is queued, within SHUTDOWN_FLUSH_MS_MAX, and stops. */
  shutdown(): Promise<void>;
}

type DropReason = 'queue_full' | 'export_failed';

/** Spans handed in, handed to the exporter, and dropped, as plain numbers that /metrics reads when scraped. */
class SpanCounts {
  queued = 0;
  exporting = 0;
  readonly dropped: Record<DropReason, number> = { queue_full: 0, export_failed: 0 };
}

export function startTracing(config: TracingConfig, setup: TracingSetup): Tracing {
  const counts = new SpanCounts();
  if (setup.registry !== undefined) registerCounters(setup.registry, setup.service, counts);
  const exporter = new WatchedExporter(newExporter(config), counts, setup.log);
  const serviceName =
    config.serviceName ?? config.resourceAttributes[ATTR_SERVICE_NAME] ?? setup.service;
  const provider = new BasicTracerProvider({
    resource: defaultResource().merge(
      resourceFromAttributes({ ...config.resourceAttributes, [ATTR_SERVICE_NAME]: serviceName }),
    ),
    sampler: samplerOf(config),
    spanProcessors: [
      new BoundedQueue(
        new BatchSpanProcessor(exporter, {
          maxQueueSize: config.batch.maxQueueSize,
          maxExportBatchSize: config.batch.maxExportBatchSize,
          scheduledDelayMillis: config.batch.scheduledDelayMs,
          exportTimeoutMillis: config.batch.exportTimeoutMs,
        }),
        counts,
        config.batch.maxQueueSize,
      ),
    ],
  });
  const tracer = provider.getTracer('status-services');
  const propagator = new W3CTraceContextPropagator();

  const requests: RequestTracer = {
    started(method, target, headers, socket, httpVersion, requestId) {
      // Without a traceparent there is nothing to extract: the common case skips the propagator.
      const parent =
        headers.traceparent === undefined
          ? ROOT_CONTEXT
          : propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
      const known = KNOWN_METHODS.has(method);
      const span = tracer.startSpan(
        known ? method : 'HTTP',
        {
          kind: SpanKind.SERVER,
          attributes: requestAttributes(
            method,
            known,
            target,
            headers,
            socket,
            httpVersion,
            requestId,
          ),
        },
        parent,
      );
      if (!span.isRecording()) return undefined;
      return new TracedRequest(span, known ? method : 'HTTP');
    },
  };

  const batchStarted = (work: BatchWork): ((error: Error | undefined) => void) | undefined => {
    // Store work is traced when a request it serves is: its span is a child of the first such
    // request (the one that waited longest, whose write opened the batch), linked to every other
    // one, and each of those is linked back to it. One batch, one span: its time and its size
    // are counted once, and every request's trace still leads to it.
    let first: TracedRequest | undefined;
    const others: TracedRequest[] = [];
    for (const origin of work.origins) {
      if (!(origin instanceof TracedRequest) || origin === first || origin.ended) continue;
      if (first === undefined) first = origin;
      else if (!others.includes(origin)) others.push(origin);
    }
    if (first === undefined) return undefined;
    const operation =
      work.operation === undefined
        ? 'BATCH'
        : work.size > 1
          ? `BATCH ${work.operation}`
          : work.operation;
    const attributes: Attributes = {
      [ATTR_DB_SYSTEM_NAME]: work.system,
      [ATTR_DB_OPERATION_NAME]: operation,
    };
    // The conventions count a batch from two operations on.
    if (work.size > 1) attributes[ATTR_DB_OPERATION_BATCH_SIZE] = work.size;
    const span = tracer.startSpan(
      operation,
      {
        kind: SpanKind.CLIENT,
        attributes,
        links: others.map((other) => ({ context: other.span.spanContext() })),
      },
      trace.setSpan(ROOT_CONTEXT, first.span),
    );
    const link = { context: span.spanContext() };
    for (const other of others) other.span.addLink(link);
    return (error) => {
      if (error !== undefined) {
        span.setAttribute(ATTR_ERROR_TYPE, errorTypeOf(error));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    };
  };

  let stopped: Promise<void> | undefined;
  return {
    requests,
    batchStarted,
    shutdown: () =>
      (stopped ??= new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, SHUTDOWN_FLUSH_MS_MAX);
        timer.unref();
        provider.shutdown().then(
          () => {
            clearTimeout(timer);
            resolve();
          },
          () => {
            clearTimeout(timer);
            resolve();
          },
        );
      })),
  };
}

/** A recorded request span, as the pipeline holds it (and storage, as an opaque origin). */
class TracedRequest implements RequestTrace {
  readonly traceId: string;
  readonly spanId: string;
  readonly logMembers: string;
  ended = false;

  constructor(
    readonly span: Span,
    private readonly methodName: string,
  ) {
    const ids = span.spanContext();
    this.traceId = ids.traceId;
    this.spanId = ids.spanId;
    // Both are lower-case hex: nothing to escape.
    this.logMembers = `,"trace_id":"${ids.traceId}","span_id":"${ids.spanId}"`;
  }

  finished(route: string | undefined, status: number, errorType: string | undefined): void {
    if (this.ended) return;
    this.ended = true;
    const span = this.span;
    span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
    if (route !== undefined) {
      span.setAttribute(ATTR_HTTP_ROUTE, route);
      span.updateName(`${this.methodName} ${route}`);
    }
    if (errorType !== undefined && REFUSALS.has(status))
      span.addEvent('request.refused', {
        [ATTR_HTTP_RESPONSE_STATUS_CODE]: status,
        'refusal.code': errorType,
      });
    // A 4xx is the client's to fix: only a 5xx marks the span as failed (the HTTP conventions for a
    // server).
    if (status >= 500) {
      span.setAttribute(ATTR_ERROR_TYPE, errorType ?? String(status));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  }
}

function requestAttributes(
  method: string,
  known: boolean,
  target: string,
  headers: IncomingHttpHeaders,
  socket: Socket,
  httpVersion: string,
  requestId: string,
): Attributes {
  const queryAt = target.indexOf('?');
  const attributes: Attributes = {
    [ATTR_HTTP_REQUEST_METHOD]: known ? method : '_OTHER',
    // The path only: a query may carry a token.
    [ATTR_URL_PATH]: queryAt === -1 ? target : target.slice(0, queryAt),
    [ATTR_URL_SCHEME]: 'http',
    [ATTR_NETWORK_PROTOCOL_VERSION]: httpVersion,
    [REQUEST_ID_ATTRIBUTE]: [requestId],
  };
  if (!known) attributes[ATTR_HTTP_REQUEST_METHOD_ORIGINAL] = method;
  const client = socket.remoteAddress;
  if (client !== undefined) attributes[ATTR_CLIENT_ADDRESS] = client;
  const agent = headers['user-agent'];
  if (agent !== undefined) attributes[ATTR_USER_AGENT_ORIGINAL] = agent;
  // The server as the client named it (Host), else the address the connection came in on.
  const server = serverOf(headers.host);
  if (server !== undefined) {
    attributes[ATTR_SERVER_ADDRESS] = server.address;
    attributes[ATTR_SERVER_PORT] = server.port;
  } else {
    if (socket.localAddress !== undefined) attributes[ATTR_SERVER_ADDRESS] = socket.localAddress;
    if (socket.localPort !== undefined) attributes[ATTR_SERVER_PORT] = socket.localPort;
  }
  return attributes;
}

/** The last Host seen, parsed: clients name the same one request after request. */
let lastHost: string | undefined;
let lastServer: { readonly address: string; readonly port: number } | undefined;

/** `host[:port]` (an IPv6 host in brackets); undefined for none or a malformed one. Port 80 when none is said: the scheme is http. */
function serverOf(
  host: string | undefined,
): { readonly address: string; readonly port: number } | undefined {
  if (host === undefined) return undefined;
  if (host === lastHost) return lastServer;
  const match = /^(\[[^\]]*\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(host);
  lastHost = host;
  lastServer =
    match === null
      ? undefined
      : {
          address: (match[1] as string).replace(/^\[(.*)\]$/, '$1'),
          port: match[2] === undefined ? 80 : Number(match[2]),
        };
  return lastServer;
}

function errorTypeOf(error: Error): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : error.name;
}

function samplerOf(config: TracingConfig): Sampler {
  const ratio = new TraceIdRatioBasedSampler(config.samplerRatio);
  switch (config.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
  }
}

function newExporter(config: TracingConfig): SpanExporter {
  const options = {
    url: config.tracesUrl,
    headers: { ...config.headers },
    timeoutMillis: config.exportTimeoutMs,
  };
  return config.protocol === 'http/json'
    ? new JsonExporter(options)
    : new ProtobufExporter(options);
}

/**
 * The bound on the spans waiting for export (see the head of this file): a span past it is
 * dropped here, counted, before the SDK's processor would drop it uncounted.
 */
class BoundedQueue implements SpanProcessor {
  constructor(
    private readonly inner: SpanProcessor,
    private readonly counts: SpanCounts,
    private readonly maxQueueSize: number,
  ) {}

  onStart(span: Parameters<SpanProcessor['onStart']>[0], parentContext: Context): void {
    this.inner.onStart(span, parentContext);
  }

  onEnd(span: ReadableSpan): void {
    const counts = this.counts;
    if (counts.queued - counts.exporting >= this.maxQueueSize) {
      counts.dropped.queue_full += 1;
      return;
    }
    counts.queued += 1;
    this.inner.onEnd(span);
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}

/** The OTLP exporter, watched: what it is handed leaves the queue, what it fails to send is counted, and an outage is logged once. */
class WatchedExporter implements SpanExporter {
  private failing = false;

  constructor(
    private readonly inner: SpanExporter,
    private readonly counts: SpanCounts,
    private readonly log: Logger,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.counts.exporting += spans.length;
    this.inner.export(spans, (result) => {
      if (result.code === ExportResultCode.SUCCESS) {
        if (this.failing) this.log.info('spans reach the collector again');
        this.failing = false;
      } else {
        this.counts.dropped.export_failed += spans.length;
        // Once per outage, not per batch: the counter says how many.
        if (!this.failing)
          this.log.warn(
            'spans could not be exported: dropped, and counted in otel_spans_dropped_total',
            { error: result.error?.message },
          );
        this.failing = true;
      }
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

function registerCounters(registry: Registry, service: string, counts: SpanCounts): void {
  new Counter<'service' | 'reason'>({
    name: 'otel_spans_dropped_total',
    help: 'Spans not delivered to the collector, by reason: queue_full (the export queue, OTEL_BSP_MAX_QUEUE_SIZE, was full) or export_failed (the collector refused them or could not be reached in time)',
    labelNames: ['service', 'reason'],
    registers: [registry],
    collect() {
      this.reset();
      for (const reason of ['queue_full', 'export_failed'] as const)
        this.inc({ service, reason }, counts.dropped[reason]);
    },
  });
  new Counter<'service'>({
    name: 'otel_spans_exported_total',
    help: 'Spans handed to the OTLP exporter (delivered, unless counted in otel_spans_dropped_total)',
    labelNames: ['service'],
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ service }, counts.exporting);
    },
  });
}
