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
//
// The span's ids go on the request's log lines: app.ts reads them on the call.
import { UNMATCHED_ROUTE } from '../../http/request-metrics.js';
import type { Route } from '../../http/route.js';
import type { RequestTracer } from './request-trace.js';
import type { Call, RequestHeaderDoc, Stage } from '../../http/stages/stage.js';

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

export function tracingStage(tracer: RequestTracer): Stage {
  return {
    name: 'tracing',
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
      call.trace = trace;
      if (trace !== undefined) call.work = { deadline: call.work.deadline, origin: trace };
      return undefined;
    },
    finished(call: Call, status: number): void {
      const trace = call.trace;
      if (trace !== undefined)
        trace.finished(
          call.route === UNMATCHED_ROUTE ? undefined : call.route,
          status,
          call.errorType,
        );
    },
    docs: {
      requestHeaders: (_route: Route) => TRACE_CONTEXT_HEADERS,
    },
  };
}
