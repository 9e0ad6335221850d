// Tracing with OpenTelemetry, loaded only when tracing is on (cli.ts imports this module
// dynamically): one SERVER span per sampled request, a CLIENT span per store batch a sampled
// request waits on, exported over OTLP/HTTP in the background (export-queue.ts).
//
// The SDK decides and names: its samplers decide a caller's trace, its parser reads the
// traceparent, its resource detection and the semantic conventions' names say what a span is. The
// decision comes first, once, from the trace id: a new trace's is decided by the SDK's rule as its
// id is drawn (new-traces.ts), so that a request not sampled gets no span, no attributes, no
// context and not even an id written out; a caller's trace, by the SDK's sampler. A sampled one is
// recorded as a plain ReadableSpan (recorded-span.ts) and encoded as it ends (otlp-protobuf.ts),
// its bytes waiting for export in one buffer.
import {
  ROOT_CONTEXT,
  SpanKind,
  trace,
  type Attributes,
  type Link,
  type TraceState,
} from '@opentelemetry/api';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  RandomIdGenerator,
  SamplingDecision,
  TraceIdRatioBasedSampler,
  type Sampler,
} from '@opentelemetry/sdk-trace-base';
import {
  ATTR_DB_COLLECTION_NAME,
  ATTR_DB_NAMESPACE,
  ATTR_DB_OPERATION_BATCH_SIZE,
  ATTR_DB_OPERATION_NAME,
  ATTR_DB_SYSTEM_NAME,
  ATTR_ERROR_TYPE,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_SERVICE_NAME,
} from '@opentelemetry/semantic-conventions';
import { Counter, type Registry } from 'prom-client';
import type { BatchWork, StoreObserver } from '../../db/store-observer.js';
import type { Logger } from '../../observe/log.js';
import { DROP_REASONS, ExportQueue, SpanCounts } from './export-queue.js';
import type { TracingConfig } from './options.js';
import { NewTraces } from './new-traces.js';
import { threadedSender } from './otlp-sender.js';
import { RecordedSpan, type SpanOrigin } from './recorded-span.js';
import { requestAttributes } from './request-attributes.js';
import type { RequestTrace, RequestTracer } from './request-trace.js';
import { JsonBatches, ProtobufBatches } from './span-batches.js';
import { parseTraceState, RANDOM_FLAG, remoteParent, SAMPLED_FLAG } from './trace-context.js';

/** Shutdown waits this long at most for the last spans to reach the collector. */
export const SHUTDOWN_FLUSH_MS_MAX = 5_000;

/** The refusals a request may meet on its way (rate limit, preconditions, shedding or a store fault, deadline): an event on its span. */
const REFUSALS: ReadonlySet<number> = new Set([412, 428, 429, 503, 504]);
const NO_ATTRIBUTES: Attributes = {};
const NO_LINKS: Link[] = [];

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

export function startTracing(config: TracingConfig, setup: TracingSetup): Tracing {
  const counts = new SpanCounts();
  if (setup.registry !== undefined) registerCounters(setup.registry, setup.service, counts);
  const serviceName =
    config.serviceName ?? config.resourceAttributes[ATTR_SERVICE_NAME] ?? setup.service;
  const origin: SpanOrigin = {
    resource: defaultResource().merge(
      resourceFromAttributes({ ...config.resourceAttributes, [ATTR_SERVICE_NAME]: serviceName }),
    ),
    scope: { name: 'status-services' },
  };
  const batches = config.protocol === 'http/json' ? new JsonBatches() : new ProtobufBatches(origin);
  const queue = new ExportQueue(
    batches,
    threadedSender({
      url: config.tracesUrl,
      contentType: batches.contentType,
      headers: config.headers,
      timeoutMs: Math.min(config.exportTimeoutMs, config.batch.exportTimeoutMs),
    }),
    config.batch,
    counts,
    setup.log,
  );
  const ended = (span: RecordedSpan): void => {
    if (span.end()) queue.add(span);
  };
  let stopped: Promise<void> | undefined;
  return {
    requests: requestTracer(config, samplerOf(config), origin, ended),
    batchStarted: batchTracer(origin, ended),
    // A collector that does not answer holds the exit no longer than the bound: close() gives up
    // the export still out.
    shutdown: () =>
      (stopped ??= new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, SHUTDOWN_FLUSH_MS_MAX);
        void queue.flush(Date.now() + SHUTDOWN_FLUSH_MS_MAX).then(() => {
          clearTimeout(timer);
          resolve();
        });
      }).then(() => queue.close())),
  };
}

function requestTracer(
  config: TracingConfig,
  sampler: Sampler,
  origin: SpanOrigin,
  ended: (span: RecordedSpan) => void,
): RequestTracer {
  const ids = new RandomIdGenerator();
  const newTraces = new NewTraces(config.sampler, config.samplerRatio);
  const { knownMethods, propagators } = config;
  return {
    readsTraceContext: propagators.traceContext,
    started(method, target, headers, socket, httpVersion, requestId) {
      const parent = propagators.traceContext ? remoteParent(headers.traceparent) : undefined;
      // The decision, once, before anything else is made: a request not sampled costs no more. A
      // new trace is decided as its id is drawn (new-traces.ts); a caller's, by the SDK's sampler.
      let traceId: string | undefined;
      let traceState: TraceState | undefined;
      if (parent === undefined) {
        traceId = newTraces.next();
        if (traceId === undefined) return undefined;
      } else {
        traceId = parent.traceId;
        const decision = sampler.shouldSample(
          trace.setSpanContext(ROOT_CONTEXT, parent),
          traceId,
          knownMethods.has(method) ? method : 'HTTP',
          SpanKind.SERVER,
          NO_ATTRIBUTES,
          NO_LINKS,
        );
        if (decision.decision !== SamplingDecision.RECORD_AND_SAMPLED) return undefined;
        traceState = decision.traceState ?? parseTraceState(headers.tracestate);
      }
      const known = knownMethods.has(method);
      const name = known ? method : 'HTTP';
      // Our trace ids are random (Level 2's random flag); a caller's says whether its is.
      const random = parent === undefined ? RANDOM_FLAG : parent.traceFlags & RANDOM_FLAG;
      const span = new RecordedSpan(
        name,
        SpanKind.SERVER,
        { traceId, spanId: ids.generateSpanId(), traceFlags: SAMPLED_FLAG | random, traceState },
        parent,
        requestAttributes(method, known, target, headers, socket, httpVersion, requestId),
        origin,
      );
      return new TracedRequest(span, ended);
    },
  };
}

/** A recorded request span, as the pipeline holds it (and storage, as an opaque origin). */
class TracedRequest implements RequestTrace {
  readonly traceId: string;
  readonly spanId: string;
  readonly logMembers: string;

  constructor(
    readonly span: RecordedSpan,
    private readonly ended: (span: RecordedSpan) => void,
  ) {
    const ids = span.spanContext();
    this.traceId = ids.traceId;
    this.spanId = ids.spanId;
    // Both are lower-case hex: nothing to escape.
    this.logMembers = `,"trace_id":"${ids.traceId}","span_id":"${ids.spanId}"`;
  }

  finished(route: string | undefined, status: number, errorType: string | undefined): void {
    const span = this.span;
    if (span.ended) return;
    span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
    if (route !== undefined) {
      span.setAttribute(ATTR_HTTP_ROUTE, route);
      span.name = `${span.name} ${route}`;
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
      span.fail();
    }
    this.ended(span);
  }
}

/**
 * Store work is traced when a request it serves is: its span is a child of the first such request
 * (the one that waited longest, whose write opened the batch), linked to every other one, and each
 * of those is linked back to it. One batch, one span: its time and its size are counted once, and
 * every request's trace still leads to it.
 */
function batchTracer(
  origin: SpanOrigin,
  ended: (span: RecordedSpan) => void,
): NonNullable<StoreObserver['batchStarted']> {
  const ids = new RandomIdGenerator();
  return (work: BatchWork) => {
    let first: TracedRequest | undefined;
    const others: TracedRequest[] = [];
    for (const workOrigin of work.origins) {
      if (!(workOrigin instanceof TracedRequest) || workOrigin === first || workOrigin.span.ended)
        continue;
      if (first === undefined) first = workOrigin;
      else if (!others.includes(workOrigin)) others.push(workOrigin);
    }
    if (first === undefined) return undefined;
    const parent = first.span.spanContext();
    const span = new RecordedSpan(
      batchSpanName(work),
      SpanKind.CLIENT,
      { traceId: parent.traceId, spanId: ids.generateSpanId(), traceFlags: parent.traceFlags },
      parent,
      batchAttributes(work),
      origin,
    );
    for (const other of others) span.links.push({ context: other.span.spanContext() });
    const link = { context: span.spanContext() };
    for (const other of others) other.span.links.push(link);
    return (error) => {
      if (error !== undefined) {
        span.setAttribute(ATTR_ERROR_TYPE, errorTypeOf(error));
        span.fail();
      }
      ended(span);
    };
  };
}

/** The conventions count a batch from two operations on; BATCH, or BATCH and the one statement all of them run. */
function operationOf(work: BatchWork): string {
  if (work.operation === undefined) return 'BATCH';
  return work.size > 1 ? `BATCH ${work.operation}` : work.operation;
}

/** `{db.operation.name} {target}`, the target the table, else the database (the conventions' fallbacks). */
function batchSpanName(work: BatchWork): string {
  const target = work.collection ?? work.namespace;
  return target === undefined ? operationOf(work) : `${operationOf(work)} ${target}`;
}

function batchAttributes(work: BatchWork): Attributes {
  const attributes: Attributes = {
    [ATTR_DB_SYSTEM_NAME]: work.system,
    [ATTR_DB_OPERATION_NAME]: operationOf(work),
  };
  if (work.namespace !== undefined) attributes[ATTR_DB_NAMESPACE] = work.namespace;
  if (work.collection !== undefined) attributes[ATTR_DB_COLLECTION_NAME] = work.collection;
  if (work.size > 1) attributes[ATTR_DB_OPERATION_BATCH_SIZE] = work.size;
  if (work.server !== undefined) {
    attributes[ATTR_SERVER_ADDRESS] = work.server.address;
    attributes[ATTR_SERVER_PORT] = work.server.port;
  }
  return attributes;
}

/** A store error's code (store-errors.ts: the database's SQLSTATE or the fault's kind), else its class. */
function errorTypeOf(error: Error): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : error.name;
}

/** The SDK sampler the settings name: it decides every request that continues a caller's trace. */
export function samplerOf(config: Pick<TracingConfig, 'sampler' | 'samplerRatio'>): Sampler {
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

function registerCounters(registry: Registry, service: string, counts: SpanCounts): void {
  new Counter<'service' | 'reason'>({
    name: 'otel_spans_dropped_total',
    help: 'Spans not delivered to the collector, by reason: queue_full (the export queue, OTEL_BSP_MAX_QUEUE_SIZE, was full), export_failed (the collector refused them or could not be reached in time) or throttled (the collector asked to wait, 429 or 503, and the queue filled meanwhile or the batch ran out of time)',
    labelNames: ['service', 'reason'],
    registers: [registry],
    collect() {
      this.reset();
      for (const reason of DROP_REASONS) this.inc({ service, reason }, counts.dropped[reason]);
    },
  });
  new Counter<'service'>({
    name: 'otel_spans_exported_total',
    help: 'Spans handed to the OTLP exporter (delivered, unless counted in otel_spans_dropped_total)',
    labelNames: ['service'],
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ service }, counts.exported);
    },
  });
}
