// The request handler shared by every service: a fold over the pipeline's stages (stage.ts,
// pipeline-stages.ts), then the route's handler, and the one writer of responses. Every response
// carries the request's id (X-Request-Id) and the headers the stages added, and is reported once
// to the observer (access line, metrics).
//
// Hot path: a request costs one call chain, one record (the Call) and, for a handler that waits,
// one promise (a read that needs no wait is answered without one, see src/common/eventually.ts); no
// async wrapper functions; the constant response to an unknown path is rendered once; and invalid
// input is handed back as a value that is not even an Error, rather than thrown (a throw costs
// about as much as the rest of a 422). Responses are written at the end of the event-loop turn, all
// together (turn-end-writes.ts). `Buffer` and `performance` are imported from their modules: Node's
// globals of those names are getters, and reading one costs a call each time (callgrind).
import { Buffer } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Logger } from '../observe/log.js';
import { DeadlinePassed } from '../common/deadline.js';
import { respondedByParser } from './connections/parser-responses.js';
import { ApiError, ClientAbortError, InvalidRequest, Replayed } from './errors.js';
import { isPromise } from '../common/eventually.js';
import { UNBOUNDED_WORK } from '../common/work.js';
import { renderError, type ErrorFormat } from './render.js';
import { requestIdFor } from './request-id.js';
import { UNMATCHED_ROUTE } from './request-metrics.js';
import type { RequestObserver } from './request-observer.js';
import {
  Hold,
  type Call,
  type LogMembers,
  type StageReply,
  type Pipeline,
  type PipelineDefinition,
  type Stage,
} from './stages/stage.js';
import {
  responseHeaders,
  CLIENT_CLOSED_REQUEST,
  INTERNAL_ERROR_TEXT,
  plainInternalErrorHeaders,
  sendReply,
  withConnectionClose,
} from './responses.js';
import { writesAtTurnEnd } from './turn-end-writes.js';

/** The pipeline (pipeline-stages.ts), and what the handler itself needs. */
export interface AppOptions {
  readonly pipeline: PipelineDefinition;
  readonly errorFormat: ErrorFormat;
  readonly log: Logger;
  readonly observer: RequestObserver;
  /** Set once the server stops: answers then say `Connection: close`, so that clients leave. */
  readonly shutdown: { readonly started: boolean };
  /**
   * Failures of the layers below that this layer cannot know (a store's fault), turned into an
   * error it renders; anything it does not recognise it returns unchanged.
   */
  readonly translateError?: (error: unknown) => unknown;
}

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

const ignore = (): void => undefined;

/** True once the request's response is set (it is then written at the end of the turn). */
const responded = (call: Call): boolean => call.status !== 0;

/** What a span says of an error the call is answered with: its wire code, INTERNAL for a failure of ours (the code its answer carries). */
function errorTypeOf(error: unknown): string {
  return error instanceof ApiError ? error.code : 'INTERNAL';
}

export function createRequestHandler(options: AppOptions): RequestHandler {
  const { errorFormat, log, observer, shutdown } = options;
  const { stages, handler } = options.pipeline;
  const templateOf = options.pipeline.templateOf ?? ((): undefined => undefined);
  const enters = stages
    .filter((stage) => stage.enter !== undefined)
    .map((stage) => (stage.enter as NonNullable<Stage['enter']>).bind(stage));
  const watchers = stages.filter(
    (stage) => stage.waits !== undefined || stage.settles !== undefined,
  );
  const finishers = stages.filter((stage) => stage.finished !== undefined);
  const loggers = stages.filter((stage) => stage.logs !== undefined);
  const translate = options.translateError ?? ((error: unknown) => error);
  const pipeline: Pipeline = { fail };

  /** What the stages add to the call's log lines; undefined when none adds anything (nearly always one stage: tracing's). */
  function logMembers(call: Call): LogMembers | undefined {
    let found: LogMembers | undefined;
    for (const stage of loggers) {
      const members = stage.logs?.(call);
      if (members === undefined) continue;
      found =
        found === undefined
          ? members
          : { fields: { ...found.fields, ...members.fields }, json: found.json + members.json };
    }
    return found;
  }

  /** An error line's fields: the request id, and what the stages add (a span's ids). */
  function errorFields(call: Call): Record<string, string> {
    const members = logMembers(call);
    return members === undefined
      ? { requestId: call.id }
      : { requestId: call.id, ...members.fields };
  }

  /** Sets the response; it is written, and reported, at the end of the turn. A request gets one response. */
  function send(
    call: Call,
    status: number,
    headers: Call['responseHeaders'],
    body: string | Buffer | undefined,
    bytes: number,
  ): void {
    call.status = status;
    call.responseHeaders = headers;
    call.responseBody = body;
    call.bytes = bytes;
    queueResponse(call);
  }

  /**
   * Writes the whole response with the headers the stages added, then reports it. Every header goes
   * to writeHead at once, in one list made for this response: the stages' headers are pushed onto
   * it rather than copied, and nothing is set behind (see responseRefused).
   */
  function write(call: Call): void {
    try {
      call.res.writeHead(call.status, finalHeaders(call, call.responseHeaders ?? []));
      call.res.end(call.responseBody);
    } catch (error) {
      responseRefused(call, error);
      return;
    }
    report(call, call.status, call.bytes);
  }

  function finalHeaders(
    call: Call,
    headers: NonNullable<Call['responseHeaders']>,
  ): NonNullable<Call['responseHeaders']> {
    const added = call.headers;
    if (added !== undefined) for (const header of added) headers.push(header);
    return shutdown.started ? withConnectionClose(headers) : headers;
  }

  function report(call: Call, status: number, bytes: number): void {
    if (finishers.length > 0) for (const stage of finishers) stage.finished?.(call, status);
    observer.finished(
      call.method,
      call.url,
      routeOf(call, status),
      status,
      call.method === 'HEAD' ? 0 : bytes,
      call.id,
      call.startedMs,
      true,
      loggers.length === 0 ? undefined : logMembers(call)?.json,
    );
  }

  /**
   * The route a response is counted under: the matched one's template; for a response given before
   * routing (a preflight, a refused cross-site write) the template of its path; `unmatched` for a
   * path no route has and for routing's own 404, 405 and 307.
   */
  function routeOf(call: Call, status: number): string {
    if (call.matched !== undefined || status === 404 || status === 405 || status === 307)
      return call.route;
    return templateOf(call.url) ?? UNMATCHED_ROUTE;
  }

  /** node:http refused to write a response: a plain 500 instead, the failure in the log. Never throws. */
  function responseRefused(call: Call, error: unknown): void {
    const { res } = call;
    log.error('failed to write an answer', {
      ...errorFields(call),
      method: call.method,
      url: call.url,
      status: call.status,
      error,
    });
    if (res.headersSent) {
      res.destroy();
      report(call, res.statusCode, 0);
      return;
    }
    try {
      for (const name of res.getHeaderNames()) res.removeHeader(name);
      // The refused writeHead has already set the reason phrase of its own status ("OK").
      res.statusMessage = INTERNAL_ERROR_TEXT;
      res.writeHead(500, finalHeaders(call, plainInternalErrorHeaders(call.id)));
      res.end(INTERNAL_ERROR_TEXT);
    } catch {
      res.destroy();
    }
    report(call, 500, INTERNAL_ERROR_TEXT.length);
  }

  // Only a report that threw comes here: its response went out, so the log is all there is to do.
  const queueResponse = writesAtTurnEnd(write, (call, error) =>
    log.error('failed to report an answer', { ...errorFields(call), error }),
  );

  /** Answers with the error in the active format, unless the call has its response. Never throws. */
  function fail(call: Call, error: unknown): void {
    const { res } = call;
    if (error instanceof ClientAbortError) {
      // Nobody is left to answer: its access line (499, nginx's "client closed request") is all the
      // log says of it. A request answered by the parser's handler (a 408, a body it could not
      // read: parser-responses.ts) was reported there.
      res.destroy();
      if (!respondedByParser.has(res.socket as Socket)) report(call, CLIENT_CLOSED_REQUEST, 0);
      return;
    }
    try {
      // A replayed business rule (the default format's unhandled 500 for insufficient funds) was
      // logged when it happened; its replay is a response like any other. Anything else is logged.
      const replayed = error instanceof Replayed ? error : undefined;
      const cause = replayed === undefined ? error : replayed.error;
      const translated = translate(cause);
      const rendered = renderError(translated, errorFormat);
      if (rendered.unexpected && !(replayed !== undefined && cause instanceof ApiError))
        log.error('unhandled failure', {
          ...errorFields(call),
          method: call.method,
          url: call.url,
          error: cause,
        });
      if (responded(call)) return;
      const bytes = Buffer.byteLength(rendered.body);
      const headers = responseHeaders(rendered, call.id, bytes);
      if (replayed !== undefined) for (const header of replayed.headers) headers.push(header);
      // Read by the stages' finished() (a tracing stage's refusal event, a 5xx's error.type).
      call.errorType = errorTypeOf(translated);
      send(call, rendered.status, headers, rendered.body, bytes);
    } catch (failure) {
      // Rendering itself failed: still no crash, and nothing internal for the client.
      log.error('failed to answer with an error', { ...errorFields(call), error: failure });
      if (!responded(call))
        send(
          call,
          500,
          plainInternalErrorHeaders(call.id),
          INTERNAL_ERROR_TEXT,
          INTERNAL_ERROR_TEXT.length,
        );
    }
  }

  /** Responds with a reply (a route's, or a validation failure) or an error, once any held decision allows it. */
  function conclude(call: Call, ok: boolean, value: unknown): void {
    const held = call.held;
    if (held !== undefined) {
      call.held = undefined;
      held.then(
        () => (responded(call) ? undefined : conclude(call, ok, value)),
        (refusal: unknown) => fail(call, refusal),
      );
      return;
    }
    if (!ok) return fail(call, value);
    try {
      const reply = value as StageReply;
      if (reply instanceof InvalidRequest) return fail(call, reply);
      sendReply(call, reply, call.id, send);
    } catch (error) {
      fail(call, error);
    }
  }

  /** The fold: each stage's enter in order from `from`, then the handler. */
  function run(call: Call, from: number): void {
    for (let i = from; i < enters.length; i++) {
      let entered: ReturnType<NonNullable<Stage['enter']>>;
      try {
        entered = (enters[i] as NonNullable<Stage['enter']>)(call);
      } catch (error) {
        return conclude(call, false, error);
      }
      if (entered === undefined) continue;
      if (entered instanceof Hold) {
        // Handled now: a refusal that comes before the handler settles is read by conclude(), not
        // left to end the process as an unhandled rejection.
        entered.decided.catch(ignore);
        call.held = entered.decided;
        continue;
      }
      if (isPromise(entered)) {
        entered.then(
          (reply) => (reply === undefined ? run(call, i + 1) : conclude(call, true, reply)),
          (error: unknown) => conclude(call, false, error),
        );
        return;
      }
      return conclude(call, true, entered);
    }
    handle(call);
  }

  /** The handler; a wait is watched by the stages that watch one. */
  function handle(call: Call): void {
    let handled: ReturnType<typeof handler>;
    try {
      handled = handler(call);
    } catch (error) {
      return conclude(call, false, error);
    }
    if (!isPromise(handled)) return conclude(call, true, handled);
    if (watchers.length === 0) {
      handled.then(
        (reply) => conclude(call, true, reply),
        (error: unknown) => conclude(call, false, error),
      );
      return;
    }
    for (const stage of watchers) stage.waits?.(call, pipeline);
    handled.then(
      (reply) => (settled(call) ? conclude(call, true, reply) : undefined),
      (error: unknown) => (settled(call) ? conclude(call, false, error) : settledLate(call, error)),
    );
  }

  /** The handler settled: false if its request was answered meanwhile (its deadline passed). */
  function settled(call: Call): boolean {
    for (const stage of watchers) stage.settles?.(call);
    return !responded(call);
  }

  /** What the handler came to after its request was answered 504: only a fault of ours is worth a line. */
  function settledLate(call: Call, error: unknown): void {
    if (error instanceof DeadlinePassed) return;
    if (renderError(translate(error), errorFormat).unexpected)
      log.error('unhandled failure after the deadline passed', {
        ...errorFields(call),
        method: call.method,
        url: call.url,
        error,
      });
  }

  return (req, res) => {
    const startedMs = performance.now();
    observer.started();
    run(newCall(req, res, requestIdFor(req.headers['x-request-id']), startedMs), 0);
  };
}

function newCall(req: IncomingMessage, res: ServerResponse, id: string, startedMs: number): Call {
  return {
    req,
    res,
    method: req.method ?? 'GET',
    url: req.url ?? '/',
    id,
    startedMs,
    route: UNMATCHED_ROUTE,
    matched: undefined,
    values: undefined,
    input: undefined,
    body: undefined,
    handler: undefined,
    slots: undefined,
    headers: undefined,
    held: undefined,
    work: UNBOUNDED_WORK,
    errorType: undefined,
    status: 0,
    responseHeaders: undefined,
    responseBody: undefined,
    bytes: 0,
  };
}
