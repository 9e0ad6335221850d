// What the HTTP pipeline tells tracing about a request, and all it needs to know of it: a narrow
// interface, so that the pipeline imports no part of the OpenTelemetry SDK (tracing.ts loads that,
// and only when tracing is on). With tracing off the pipeline has no tracing stage
// (src/features/tracing/stage.ts): nothing of this runs.
import type { IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';

export interface RequestTracer {
  /** Whether `traceparent` and `tracestate` are read (OTEL_PROPAGATORS names tracecontext, as by default). */
  readonly readsTraceContext: boolean;
  /**
   * A request arrived: its SERVER span starts, continuing the trace its `traceparent` names (a
   * malformed one is ignored and a new trace starts). Undefined when the span is not recorded
   * (sampled out): the decision is made first, and such a request costs tracing nothing more.
   */
  started(
    method: string,
    target: string,
    headers: IncomingHttpHeaders,
    socket: Socket,
    httpVersion: string,
    requestId: string,
  ): RequestTrace | undefined;
}

export interface RequestTrace {
  readonly traceId: string;
  readonly spanId: string;
  /** `,"trace_id":"…","span_id":"…"`: the members the access line appends (see Logger.infoJson). */
  readonly logMembers: string;
  /**
   * The response is out (or given up): `route` is the matched template, or undefined for none;
   * `errorType` the wire code of the error it was answered with (INTERNAL for a failure of ours),
   * undefined for a reply. A refusal (429, 412, 428, 503, 504) becomes an event on the
   * span; a 5xx sets error.type and the span's status to ERROR.
   */
  finished(route: string | undefined, status: number, errorType: string | undefined): void;
}
