// The tracing stage (issue 43, docs/operating.md#traces): first in the list, and in it only when
// tracing is on, so that it sees every request the stages see and every response, and so that
// tracing off costs a request nothing. The SDK is not imported here: the tracer is handed in
// (src/features/tracing/request-trace.ts says all the pipeline knows of it).
//
// - enter: the request's SERVER span starts, continuing the trace a `traceparent` names; a
//   sampled-out request gets no span and costs nothing more. A sampled one's span becomes the
//   origin of the call's work (src/common/work.ts), so that the store batches its work joins are
//   spans of its trace.
// - finished: the span ends with the matched route, the status, a refusal's event and a 5xx's
//   error.type (app.ts puts the error's code on the call as it answers with it).
// - logs: the span's ids go on the request's log lines.
import { UNMATCHED_ROUTE } from '../../http/request-metrics.js';
import type { Route } from '../../http/route.js';
import type { RequestTrace, RequestTracer } from './request-trace.js';
import {
  Slot,
  type Call,
  type LogMembers,
  type PlacedStage,
  type RequestHeaderDoc,
} from '../../http/stages/stage.js';

/** The W3C Trace Context headers, read on every operation while tracing is on. */
const TRACE_CONTEXT_HEADERS: readonly RequestHeaderDoc[] = [
  {
    name: 'traceparent',
    description:
      'W3C Trace Context: the trace and the parent span this request continues (version-traceid-parentid-flags); a malformed one is ignored and a new trace starts. Read only with tracing on.',
    required: false,
    schema: { type: 'string', pattern: '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$' },
    example: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
  },
  {
    name: 'tracestate',
    description:
      "W3C Trace Context: vendors' trace state, carried on with the traceparent it comes with. Read only with tracing on.",
    required: false,
    schema: { type: 'string' },
    example: 'congo=t61rcWkgMzE',
  },
];

/** The call's recorded span; undefined when it was sampled out. */
const TRACE = new Slot<RequestTrace>('span');

export function tracingStage(tracer: RequestTracer): PlacedStage {
  return {
    name: 'tracing',
    place: 'request',
    enter(call: Call): undefined {
      const { req } = call;
      const trace = tracer.started(
        call.method,
        call.url,
        req.headers,
        req.socket,
        req.httpVersion,
        call.id,
      );
      if (trace !== undefined) {
        TRACE.set(call, trace);
        call.work = { deadline: call.work.deadline, origin: trace };
      }
      return undefined;
    },
    finished(call: Call, status: number): void {
      const trace = TRACE.get(call);
      if (trace !== undefined)
        trace.finished(
          call.route === UNMATCHED_ROUTE ? undefined : call.route,
          status,
          call.errorType,
        );
    },
    // The span's ids go on the call's log lines, its access line and any error line.
    logs(call: Call): LogMembers | undefined {
      const trace = TRACE.get(call);
      return trace === undefined
        ? undefined
        : { fields: { trace_id: trace.traceId, span_id: trace.spanId }, json: trace.logMembers };
    },
    docs: {
      requestHeaders: (_route: Route) => (tracer.readsTraceContext ? TRACE_CONTEXT_HEADERS : []),
    },
  };
}
