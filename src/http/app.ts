// The request pipeline shared by every service: route, validate, call the handler, write the
// answer, and send any error through the one renderer. Every answer carries the request's id
// (X-Request-Id) and is reported once to the observer (access line, metrics).
//
// Hot path: a request costs one call chain, one small record of ours and, for a handler that
// waits, one promise (a read that needs no wait is answered without one, see src/eventually.ts); no
// async wrapper functions; the constant answer to an unknown path is rendered once; and invalid
// input is handed back as a value that is not even an Error, rather than thrown (a throw costs
// about as much as the rest of a 422). Answers are written at the end of the event-loop turn, all
// together (turn-end-writes.ts). `Buffer` and `performance` are imported from their modules, here
// and wherever a request reads them: Node's globals of those names are getters, and reading one
// costs a call each time (about 500 machine instructions of a GET, callgrind).
import { Buffer } from 'node:buffer';
import type { IncomingMessage, OutgoingHttpHeader, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Logger } from '../log.js';
import { decodeBody, readBody, type BodyLimits } from './body.js';
import { ETAG_HEADER, preconditionsOf } from './conditions.js';
import { corsHeaders, preflightHeaders, type CorsPolicy } from './cors.js';
import { DeadlinePassed, enterDeadline, leaveDeadline, type Deadline, type DeadlineHolder } from '../deadline-scope.js';
import { deadlineExceeded } from './deadline.js';
import { NEVER_SHED, overloaded, type LoadShedder } from './load-shedding.js';
import { timedOut } from './parser-answers.js';
import { ApiError, ClientAbortError, InvalidRequest, methodNotAllowed, notFound } from './errors.js';
import { isPromise } from '../eventually.js';
import { DEFAULT_IDEMPOTENCY_TTL_MS, IdempotencyGate, REPLAYED_HEADER, ReplayedFailure, type IdempotencyPolicy } from './idempotency.js';
import { RateLimitGate } from './rate-limit.js';
import type { RequestKind } from '../rate-limits/policy.js';
import { JSON_TYPE, renderError, type ErrorFormat, type RenderedError } from './render.js';
import { REQUEST_ID_HEADER, requestIdFor } from './request-id.js';
import { UNMATCHED_ROUTE } from './request-metrics.js';
import type { RequestObserver } from './request-observer.js';
import type { Reply, Route } from './route.js';
import { Router } from './routing.js';
import type { Issues } from './schema.js';
import { writesAtTurnEnd } from './turn-end-writes.js';
// Tracing hook (issue 43): the types of src/telemetry/request-trace.ts only; the SDK is never imported here.
import type { RequestTrace, RequestTracer } from '../telemetry/request-trace.js';
import { enterOrigin, leaveOrigin, type WorkOrigin } from '../work-origin.js';

export interface AppOptions {
  readonly routes: readonly Route[];
  readonly errorFormat: ErrorFormat;
  readonly limits: BodyLimits;
  readonly log: Logger;
  readonly observer: RequestObserver;
  /** Set once the server stops: answers then say `Connection: close`, so that clients leave. */
  readonly shutdown: { readonly started: boolean };
  /**
   * Failures of the layers below that this layer cannot know (a store's fault), turned into an
   * error it renders; anything it does not recognise it returns unchanged.
   */
  readonly translateError?: (error: unknown) => unknown;
  /** For routes marked idempotent; by default keys are optional and kept 24 hours. */
  readonly idempotency?: IdempotencyPolicy;
  /** Cross-origin requests from browsers (cors.ts); none by default. */
  readonly cors?: CorsPolicy;
  /** A waiting request is answered 504 after this long (deadline.ts); 0 or none: no deadline. */
  readonly deadlineMs?: number;
  /** Turns requests away past a saturation signal (load-shedding.ts); none: every request is admitted. */
  readonly shedding?: LoadShedder;
  /** Rate limits on the service's routes (rate-limit.ts); none by default. */
  readonly rateLimits?: RateLimitGate;
  /** Tracing hook: a span per request (src/telemetry/); none when tracing is off. */
  readonly tracer?: RequestTracer;
}

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * An answer's headers as node:http's flat list: name, value, name, value… Node takes a list without
 * the walk over an object's keys (for-in, then hasOwnProperty for each), and a list literal is built
 * without the megamorphic stores that an object spread with computed keys costs.
 */
type HeaderList = OutgoingHttpHeader[];

/** The status reported (never sent) for a request its client abandoned mid-body. */
const CLIENT_CLOSED_REQUEST = 499;

/** One request on its way through the pipeline, with what its answer and its report need. */
interface Exchange {
  readonly res: ServerResponse;
  /** req.method and req.url, which a request from node:http always has (the types allow neither to be missing). */
  readonly method: string;
  readonly url: string;
  readonly id: string;
  readonly startedMs: number;
  /** The matched route's template, or UNMATCHED_ROUTE. */
  route: string;
  /** The answer, once there is one (status 0 until then), kept until it is written at the end of the turn. */
  status: number;
  headers: HeaderList | undefined;
  body: string | Buffer | undefined;
  bytes: number;
  /** The CORS headers every answer to this request carries, when the service has a policy. */
  readonly cors: HeaderList | undefined;
  /**
   * The request's deadline (deadline.ts), made once work that could be given up asks for it
   * (deadline-scope.ts); the timer, once the handler waits.
   */
  deadline: Deadline | undefined;
  timer: NodeJS.Timeout | undefined;
  /** Counted among the requests waiting (load shedding's signal) until its handler settles. */
  waiting: boolean;
  /** RateLimit-Policy and RateLimit, once the request is admitted under a limit. */
  limitHeaders: HeaderList | undefined;
  /** Tracing hook: the request's recorded span, if any (src/telemetry/request-trace.ts). */
  trace: RequestTrace | undefined;
}

/** Tracing hook: an error line's fields, with the trace's ids while the request's span is recorded. */
function errorFields(ex: Exchange): { requestId: string; trace_id?: string; span_id?: string } {
  return ex.trace === undefined ? { requestId: ex.id } : { requestId: ex.id, trace_id: ex.trace.traceId, span_id: ex.trace.spanId };
}

/** Tracing hook: what a span says of an error, its wire code (or, for a failure of ours, its class). */
function errorTypeOf(error: unknown): string {
  if (error instanceof ApiError) return error.code;
  return error instanceof Error ? error.name : 'Error';
}

/** Written when an answer could not be: fixed, so that writing it cannot fail in turn. */
const INTERNAL_ERROR_TEXT = 'Internal Server Error';

function plainInternalErrorHeaders(requestId: string): HeaderList {
  return ['Content-Type', 'text/plain; charset=utf-8', 'Content-Length', INTERNAL_ERROR_TEXT.length, REQUEST_ID_HEADER, requestId];
}

/** Set by the pipeline on every answer that has a body (by lower-case name): a reply's or an error's own headers never replace them. */
const PIPELINE_HEADERS: ReadonlySet<string> = new Set(['content-type', 'content-length', REQUEST_ID_HEADER.toLowerCase()]);

/** A reply's or an error's own headers (Allow, WWW-Authenticate, Idempotent-Replayed…) as a list, those of the pipeline left out. */
function ownHeaders(headers: Readonly<Record<string, string>> | undefined): HeaderList {
  const list: HeaderList = [];
  if (headers === undefined) return list;
  for (const name of Object.keys(headers)) if (!PIPELINE_HEADERS.has(name.toLowerCase())) list.push(name, headers[name] as string);
  return list;
}

/** The headers of an answer with a body: its own first, then Content-Type, Content-Length and X-Request-Id. */
function bodyHeaders(own: Readonly<Record<string, string>> | undefined, contentType: string, bytes: number, requestId: string): HeaderList {
  const pipeline: HeaderList = ['Content-Type', contentType, 'Content-Length', bytes, REQUEST_ID_HEADER, requestId];
  return own === undefined ? pipeline : ownHeaders(own).concat(pipeline);
}

/** The headers with `Connection: close` in place of any Connection header they had, whatever its case or value. */
function withConnectionClose(headers: HeaderList): HeaderList {
  const list: HeaderList = [];
  for (let i = 0; i < headers.length; i += 2) {
    if (String(headers[i]).toLowerCase() !== 'connection') list.push(headers[i] as OutgoingHttpHeader, headers[i + 1] as OutgoingHttpHeader);
  }
  list.push('Connection', 'close');
  return list;
}

/** True once the request's answer is set (it is then written at the end of the turn). */
function answered(ex: Exchange): boolean {
  return ex.status !== 0;
}

export function createRequestHandler(options: AppOptions): RequestHandler {
  const router = new Router(options.routes);
  const { errorFormat, limits, log, observer, shutdown, cors, shedding, rateLimits, tracer } = options;
  const deadlineMs = options.deadlineMs ?? 0;
  /** Whether a handler that waits is watched: for its deadline, or as the shedding signal. */
  const watchesWaits = deadlineMs > 0 || shedding !== undefined;
  const translate = options.translateError ?? ((error: unknown) => error);
  const gate = new IdempotencyGate(options.idempotency ?? { required: false, ttlMs: DEFAULT_IDEMPOTENCY_TTL_MS });
  const notFoundAnswer = renderError(notFound(), errorFormat);
  const notFoundType = notFoundAnswer.contentType;
  const notFoundBytes = Buffer.byteLength(notFoundAnswer.body);

  /**
   * Sets the answer; it is written, and reported, at the end of the turn. A request gets one answer:
   * every path calls this last, and fail() checks `answered` before it.
   */
  function send(ex: Exchange, status: number, headers: HeaderList, body: string | Buffer | undefined, bytes: number): void {
    ex.status = status;
    ex.headers = headers;
    ex.body = body;
    ex.bytes = bytes;
    queueAnswer(ex);
  }

  /**
   * Writes the whole answer, then reports it. `headers` hold the request id: passing every header
   * to writeHead at once, rather than setHeader() first, spares Node a second pass over them all,
   * and leaves nothing set behind if Node refuses one of them (see answerRefused).
   */
  function write(ex: Exchange): void {
    try {
      ex.res.writeHead(ex.status, withShutdownHeader(withCors(ex, ex.headers)));
      ex.res.end(ex.body);
    } catch (error) {
      answerRefused(ex, error);
      return;
    }
    report(ex, ex.status, ex.bytes);
  }

  /**
   * The answer's headers and the request's CORS and rate-limit headers, if any. The list is the
   * answer's own, made for it: the rate-limit fields, on every admitted answer, are added to it in
   * place rather than by a copy of the whole list.
   */
  function withCors(ex: Exchange, headers: HeaderList | undefined): HeaderList | undefined {
    const limitHeaders = ex.limitHeaders;
    let withLimits = headers;
    if (limitHeaders !== undefined) {
      withLimits ??= [];
      for (const header of limitHeaders) withLimits.push(header);
    }
    return ex.cors === undefined ? withLimits : (withLimits ?? []).concat(ex.cors);
  }

  /** Once shutdown has begun, an answer says `Connection: close` (in place of any other Connection header), so that its client leaves. */
  function withShutdownHeader(headers: HeaderList | undefined): HeaderList | undefined {
    return shutdown.started ? withConnectionClose(headers ?? []) : headers;
  }

  function report(ex: Exchange, status: number, bytes: number): void {
    const trace = ex.trace;
    observer.finished(ex.method, ex.url, ex.route, status, ex.method === 'HEAD' ? 0 : bytes, ex.id, ex.startedMs, true, trace?.logMembers);
    // Tracing hook: the span ends with the answer.
    if (trace !== undefined) trace.finished(ex.route === UNMATCHED_ROUTE ? undefined : ex.route, status);
  }

  /**
   * node:http refused to write an answer (a header value it will not send, say): a plain 500
   * instead, with none of the refused answer's headers, and the failure in the log; the connection
   * is closed if any of it went out. Never throws.
   */
  function answerRefused(ex: Exchange, error: unknown): void {
    const { res } = ex;
    log.error('failed to write an answer', { ...errorFields(ex), method: ex.method, url: ex.url, status: ex.status, error });
    if (res.headersSent) {
      res.destroy();
      report(ex, res.statusCode, 0);
      return;
    }
    try {
      for (const name of res.getHeaderNames()) res.removeHeader(name);
      // The refused writeHead has already set the reason phrase of its own status ("OK").
      res.statusMessage = INTERNAL_ERROR_TEXT;
      res.writeHead(500, withShutdownHeader(withCors(ex, plainInternalErrorHeaders(ex.id))));
      res.end(INTERNAL_ERROR_TEXT);
    } catch {
      res.destroy();
    }
    report(ex, 500, INTERNAL_ERROR_TEXT.length);
  }

  // Only a report that threw comes here: its answer went out, so the log is all there is to do.
  const queueAnswer = writesAtTurnEnd(write, (ex, error) => log.error('failed to report an answer', { ...errorFields(ex), error }));

  /** Answers with the error in the active format. Never throws: it is the last stop of every failure. */
  function fail(ex: Exchange, error: unknown): void {
    const { res, method, url } = ex;
    if (error instanceof ClientAbortError) {
      // Nobody is left to answer, and the fault is not ours: its access line (499, nginx's "client
      // closed request") is all the log says of it. A request that timed out was answered 408 by
      // the parser's handler (parser-answers.ts), which reported it.
      res.destroy();
      if (!timedOut.has(res.socket as Socket)) report(ex, CLIENT_CLOSED_REQUEST, 0);
      return;
    }
    try {
      // A replayed business rule (the default format's unhandled 500 for insufficient funds) was
      // logged when it happened; its replay is an answer like any other. Anything else is logged.
      const replayed = error instanceof ReplayedFailure;
      const cause = replayed ? error.error : error;
      const translated = translate(cause);
      const rendered = renderError(translated, errorFormat);
      if (rendered.unexpected && !(replayed && cause instanceof ApiError)) {
        log.error('unhandled failure', { ...errorFields(ex), method, url, error: cause });
      }
      // Tracing hook: a refusal or a 5xx, on the span.
      if (ex.trace !== undefined && !answered(ex)) ex.trace.failed(rendered.status, errorTypeOf(translated));
      // A failure after the answer was set (no path has one): that answer goes out, the log says why.
      if (answered(ex)) return;
      const bytes = Buffer.byteLength(rendered.body);
      const headers = answerHeaders(rendered, ex.id, bytes);
      if (replayed) headers.push(REPLAYED_HEADER, 'true');
      send(ex, rendered.status, headers, rendered.body, bytes);
    } catch (failure) {
      // Rendering itself failed: still no crash, and nothing internal for the client.
      log.error('failed to answer with an error', { ...errorFields(ex), error: failure });
      if (!answered(ex)) send(ex, 500, plainInternalErrorHeaders(ex.id), INTERNAL_ERROR_TEXT, INTERNAL_ERROR_TEXT.length);
    }
  }

  function answer(ex: Exchange, outcome: Reply | InvalidRequest): void {
    if (outcome instanceof InvalidRequest) fail(ex, outcome);
    else writeReply(ex, outcome);
  }

  function writeReply(ex: Exchange, reply: Reply): void {
    if (reply.status === 304) {
      // RFC 9110 §15.4.5: no body, and no Content-Length (it would have to be the 200's); the ETag stays.
      send(ex, 304, reply.etag === undefined ? [REQUEST_ID_HEADER, ex.id] : [ETAG_HEADER, reply.etag, REQUEST_ID_HEADER, ex.id], undefined, 0);
      return;
    }
    if (reply.status === 204 || reply.body === undefined) {
      // D5: a 204 carries neither a body nor a Content-Type, even when the handler produced a value.
      // The reply's own headers stay: a replayed DELETE's 204 says it is a replay.
      const pipeline: HeaderList = reply.status === 204 ? [REQUEST_ID_HEADER, ex.id] : ['Content-Length', 0, REQUEST_ID_HEADER, ex.id];
      send(ex, reply.status, reply.headers === undefined ? pipeline : ownHeaders(reply.headers).concat(pipeline), undefined, 0);
      return;
    }
    const bytes = Buffer.byteLength(reply.body);
    const headers = bodyHeaders(reply.headers, reply.contentType ?? JSON_TYPE, bytes, ex.id);
    if (reply.etag !== undefined) headers.push(ETAG_HEADER, reply.etag);
    send(ex, reply.status, headers, reply.body, bytes);
  }

  /** The handler waits: its deadline starts, and it counts as waiting until it settles. */
  function waits(ex: Exchange): void {
    if (deadlineMs > 0) ex.timer = setTimeout(deadlinePassed, deadlineMs, ex);
    if (shedding !== undefined) {
      shedding.waiting += 1;
      ex.waiting = true;
    }
  }

  /** The handler settled: false if its request was answered meanwhile (its deadline passed). */
  function settled(ex: Exchange): boolean {
    if (ex.timer !== undefined) clearTimeout(ex.timer);
    if (ex.waiting && shedding !== undefined) {
      shedding.waiting -= 1;
      ex.waiting = false;
    }
    return !answered(ex);
  }

  /** The 504, and the work behind it that has not started is given up (deadline-scope.ts). */
  function deadlinePassed(ex: Exchange): void {
    ex.timer = undefined;
    if (answered(ex)) return;
    ex.deadline?.expire();
    fail(ex, deadlineExceeded());
  }

  /** What the handler came to after its request was answered 504: only a fault of ours is worth a line. */
  function settledLate(ex: Exchange, error: unknown): void {
    if (error instanceof DeadlinePassed) return;
    if (renderError(translate(error), errorFormat).unexpected) log.error('unhandled failure after the deadline passed', { ...errorFields(ex), method: ex.method, url: ex.url, error });
  }

  /**
   * The rate limit's admission of a request to a limited route: its headers go on the exchange;
   * a refusal throws (or rejects). A keyed write is admitted later, by the Idempotency-Key gate
   * (the returned function): a replay of its key is answered whatever the limit.
   */
  function admission(gateOfLimits: RateLimitGate, ex: Exchange, route: Route, req: IncomingMessage): Promise<void> | KeyedAdmission | undefined {
    const kind = gateOfLimits.kindOf(route, ex.method);
    if (kind === undefined) return undefined;
    if (gateOfLimits.decidedByKeyGate(route, req)) return () => admitted(gateOfLimits, ex, kind, req);
    return admitted(gateOfLimits, ex, kind, req);
  }

  /** The limit's decision, its headers set on the exchange: at once, or once the shared limiter answers. */
  function admitted(gateOfLimits: RateLimitGate, ex: Exchange, kind: RequestKind, req: IncomingMessage): Promise<void> | undefined {
    const headers = gateOfLimits.admit(kind, req);
    if (!isPromise(headers)) {
      ex.limitHeaders = headers;
      return undefined;
    }
    return headers.then((list) => {
      ex.limitHeaders = list;
    });
  }

  /**
   * Runs a read while the shared limiter decides on it, and answers once both are done: with the
   * read's outcome if it was admitted, else with the refusal (the read changed nothing).
   */
  function runAhead(ex: Exchange, route: Route, values: readonly string[], req: IncomingMessage, admitted: Promise<void>): void {
    let outcome: Promise<Reply | InvalidRequest>;
    try {
      const run = runRoute(route, values, req, limits, gate, deadlineMs > 0 ? ex : undefined, undefined, undefined, ex.trace);
      if (watchesWaits && isPromise(run)) waits(ex);
      outcome = Promise.resolve(run);
    } catch (error) {
      outcome = Promise.reject(error);
    }
    // Whether the read settled before its request was answered (by its deadline, or a refusal).
    const ran = outcome.then(
      (value) => ({ ok: true as const, value, inTime: settled(ex) }),
      (error: unknown) => ({ ok: false as const, error, inTime: settled(ex) }),
    );
    admitted.then(
      () =>
        ran.then((result) => {
          if (!result.inTime) {
            if (!result.ok) settledLate(ex, result.error);
            return;
          }
          if (!result.ok) return fail(ex, result.error);
          try {
            answer(ex, result.value);
          } catch (error) {
            fail(ex, error);
          }
        }),
      (refusal: unknown) => fail(ex, refusal),
    );
  }

  /** Runs a matched route (admitted, or not limited) and answers with its outcome, watching its wait for the deadline and the shedding signal. */
  function runMatched(ex: Exchange, route: Route, values: readonly string[], req: IncomingMessage, keyed: KeyedAdmission | undefined): void {
    const bodyRead = watchesWaits && route.body !== undefined ? () => waits(ex) : undefined;
    let outcome: ReturnType<typeof runRoute>;
    try {
      outcome = runRoute(route, values, req, limits, gate, deadlineMs > 0 ? ex : undefined, bodyRead, keyed, ex.trace);
    } catch (error) {
      fail(ex, error);
      return;
    }
    if (isPromise(outcome)) {
      if (watchesWaits && bodyRead === undefined) waits(ex);
      outcome.then(
        (settledOutcome) => {
          if (watchesWaits && !settled(ex)) return;
          try {
            answer(ex, settledOutcome);
          } catch (error) {
            fail(ex, error);
          }
        },
        (error: unknown) => {
          if (!watchesWaits || settled(ex)) fail(ex, error);
          else settledLate(ex, error);
        },
      );
    } else {
      answer(ex, outcome);
    }
  }

  return (req, res) => {
    const startedMs = performance.now();
    const id = requestIdFor(req.headers['x-request-id']);
    observer.started();
    const ex: Exchange = {
      res,
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      id,
      startedMs,
      route: UNMATCHED_ROUTE,
      status: 0,
      headers: undefined,
      body: undefined,
      bytes: 0,
      cors: cors === undefined ? undefined : corsHeaders(cors, req.headers.origin),
      deadline: undefined,
      timer: undefined,
      waiting: false,
      limitHeaders: undefined,
      trace: undefined,
    };
    // Tracing hook: the request's span starts (tracing off: this check is all it costs).
    if (tracer !== undefined) ex.trace = tracer.started(ex.method, ex.url, req.headers, req.socket, req.httpVersion, id);
    try {
      if (cors !== undefined && ex.method === 'OPTIONS') {
        const preflight = preflightHeaders(cors, req.headers.origin, req.headers['access-control-request-method']);
        if (preflight !== undefined) {
          send({ ...ex, cors: undefined }, 204, preflight.concat(REQUEST_ID_HEADER, id), undefined, 0);
          return;
        }
      }
      const match = router.match(ex.method, ex.url);
      switch (match.kind) {
        case 'route': {
          ex.route = match.route.path;
          if (shedding !== undefined && !NEVER_SHED.has(ex.route) && shedding.refuse() !== undefined) throw overloaded();
          const admitted = rateLimits === undefined ? undefined : admission(rateLimits, ex, match.route, req);
          if (admitted !== undefined && typeof admitted !== 'function') {
            if ((rateLimits as RateLimitGate).mayRunAhead(ex.method, req)) {
              runAhead(ex, match.route, match.values, req, admitted);
              return;
            }
            admitted.then(() => runMatched(ex, match.route, match.values, req, undefined), (error: unknown) => fail(ex, error));
            return;
          }
          runMatched(ex, match.route, match.values, req, admitted);
          return;
        }
        case 'redirect':
          send(ex, 307, ['Location', match.location, 'Content-Length', '0', REQUEST_ID_HEADER, id], undefined, 0);
          return;
        case 'method-not-allowed':
          throw methodNotAllowed(match.allow);
        case 'not-found':
          send(ex, notFoundAnswer.status, bodyHeaders(undefined, notFoundType, notFoundBytes, id), notFoundAnswer.body, notFoundBytes);
          return;
      }
    } catch (error) {
      fail(ex, error);
    }
  };
}

/** An error's headers: those of any answer with a body, and `Connection: close` on a 413, so that the rest of a body too large to read ends with the connection. */
function answerHeaders(rendered: RenderedError, requestId: string, bytes: number): HeaderList {
  const headers = bodyHeaders(rendered.headers, rendered.contentType, bytes, requestId);
  return rendered.status === 413 ? withConnectionClose(headers) : headers;
}

/** A keyed write's rate-limit decision, taken by the Idempotency-Key gate after its replay lookup. */
type KeyedAdmission = () => Promise<void> | undefined;

/**
 * Validates the inputs and calls the handler: the reply, or the validation error to answer with.
 * Any other error on the way is thrown (or rejects).
 */
function runRoute(
  route: Route,
  values: readonly string[],
  req: IncomingMessage,
  limits: BodyLimits,
  gate: IdempotencyGate,
  deadline: DeadlineHolder | undefined,
  waitsAfterBody: (() => void) | undefined,
  keyed: KeyedAdmission | undefined,
  origin: WorkOrigin | undefined,
): Reply | InvalidRequest | Promise<Reply | InvalidRequest> {
  const issues: Issues = [];
  const params: Record<string, unknown> = {};
  for (const [name, spec, loc, placeholder] of route.params) {
    params[name] = spec.fromText(values[placeholder] as string, loc, issues);
  }
  const bodySpec = route.body;
  if (bodySpec === undefined) {
    if (issues.length > 0) return new InvalidRequest(issues);
    const input = { params, body: undefined, preconditions: preconditionsOf(req.headers) };
    const outer = enterDeadline(deadline);
    // Tracing hook: the store work the handler queues knows the request it serves (work-origin.ts).
    const outerOrigin = enterOrigin(origin);
    try {
      return route.idempotent === undefined ? route.handle(input) : gate.run(route, route.idempotent, input, req, undefined, keyed);
    } finally {
      leaveDeadline(outer);
      leaveOrigin(outerOrigin);
    }
  }
  return readBody(req, limits.bodyBytesMax).then((bytes) => {
    // As in the reference, the body is decoded before anything is validated: a JSON syntax error
    // (or undecodable bytes) is reported alone, even when a path parameter is also wrong.
    const decoded = decodeBody(bytes, req.headers['content-type'], limits);
    const body =
      decoded.kind === 'text'
        ? bodySpec.fromRawText(decoded.text, ['body'], issues)
        : bodySpec.fromBody(decoded.kind === 'json' ? decoded.value : undefined, ['body'], issues);
    if (issues.length > 0) return new InvalidRequest(issues);
    const input = { params, body, preconditions: preconditionsOf(req.headers) };
    const outer = enterDeadline(deadline);
    const outerOrigin = enterOrigin(origin);
    let reply: Reply | Promise<Reply>;
    try {
      reply = route.idempotent === undefined ? route.handle(input) : gate.run(route, route.idempotent, input, req, bytes, keyed);
    } finally {
      leaveDeadline(outer);
      leaveOrigin(outerOrigin);
    }
    // The deadline counts from the whole request: the time its client took to send the body is Node's to bound (408).
    if (waitsAfterBody !== undefined && isPromise(reply)) waitsAfterBody();
    return reply;
  });
}
