// The request pipeline shared by every service: route, validate, call the handler, write the
// answer, and send any error through the one renderer.
//
// Hot path: a request costs one call chain and, for an async handler, one promise of ours; no
// async wrapper functions; the constant answer to an unknown path is rendered once; and invalid
// input is handed back rather than thrown (a throw costs about as much as the rest of a 422).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../log.js';
import { decodeBody, readBody, type BodyLimits } from './body.js';
import { methodNotAllowed, notFound, RequestValidationError } from './errors.js';
import { JSON_TYPE, renderError, type ErrorFormat, type RenderedError } from './render.js';
import type { Reply, Route } from './route.js';
import { Router } from './routing.js';
import type { Issues } from './schema.js';

export interface AppOptions {
  readonly routes: readonly Route[];
  readonly errorFormat: ErrorFormat;
  readonly limits: BodyLimits;
  readonly log: Logger;
}

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

export function createRequestHandler(options: AppOptions): RequestHandler {
  const router = new Router(options.routes);
  const { errorFormat, limits, log } = options;
  const notFoundAnswer = renderError(notFound(), errorFormat);
  const notFoundHeaders = answerHeaders(notFoundAnswer);
  let requestCount = 0;

  /** Answers with the error in the active format. Never throws: it is the last stop of every failure. */
  function fail(req: IncomingMessage, res: ServerResponse, requestNumber: number, error: unknown): void {
    try {
      const rendered = renderError(error, errorFormat);
      if (rendered.unexpected) {
        log.error('unhandled failure', { requestId: requestId(requestNumber), method: req.method ?? 'GET', url: req.url, error });
      }
      if (res.headersSent) {
        res.destroy();
        return;
      }
      res.writeHead(rendered.status, answerHeaders(rendered));
      res.end(rendered.body);
    } catch (failure) {
      // Rendering itself failed: still no crash, and nothing internal for the client.
      log.error('failed to answer with an error', { requestId: requestId(requestNumber), error: failure });
      if (res.headersSent) res.destroy();
      else res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': 21 }).end('Internal Server Error');
    }
  }

  function answer(req: IncomingMessage, res: ServerResponse, requestNumber: number, outcome: Reply | RequestValidationError): void {
    if (outcome instanceof RequestValidationError) fail(req, res, requestNumber, outcome);
    else writeReply(res, outcome);
  }

  return (req, res) => {
    requestCount += 1;
    const requestNumber = requestCount;
    try {
      const match = router.match(req.method ?? 'GET', req.url ?? '/');
      switch (match.kind) {
        case 'route': {
          const outcome = runRoute(match.route, match.params, req, limits);
          if (isPromise(outcome)) {
            outcome.then(
              (settled) => {
                try {
                  answer(req, res, requestNumber, settled);
                } catch (error) {
                  fail(req, res, requestNumber, error);
                }
              },
              (error: unknown) => fail(req, res, requestNumber, error),
            );
          } else {
            answer(req, res, requestNumber, outcome);
          }
          return;
        }
        case 'redirect':
          res.writeHead(307, { Location: match.location, 'Content-Length': '0' });
          res.end();
          return;
        case 'method-not-allowed':
          throw methodNotAllowed(match.allow);
        case 'not-found':
          res.writeHead(notFoundAnswer.status, notFoundHeaders);
          res.end(notFoundAnswer.body);
          return;
      }
    } catch (error) {
      fail(req, res, requestNumber, error);
    }
  };
}

const processTag = process.pid.toString(36);
function requestId(requestNumber: number): string {
  return `${processTag}-${requestNumber.toString(36)}`;
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

function answerHeaders(rendered: RenderedError): Record<string, string | number> {
  const headers: Record<string, string | number> = { ...rendered.headers };
  headers['Content-Type'] = rendered.contentType;
  headers['Content-Length'] = Buffer.byteLength(rendered.body);
  if (rendered.status === 413) headers.Connection = 'close';
  return headers;
}

/**
 * Validates the inputs and calls the handler: the reply, or the validation error to answer with.
 * Any other error on the way is thrown (or rejects).
 */
function runRoute(
  route: Route,
  rawParams: Readonly<Record<string, string>>,
  req: IncomingMessage,
  limits: BodyLimits,
): Reply | RequestValidationError | Promise<Reply | RequestValidationError> {
  const issues: Issues = [];
  const params: Record<string, unknown> = {};
  for (const [name, spec] of route.params) {
    params[name] = spec.fromText(rawParams[name] as string, ['path', name], issues);
  }
  const bodySpec = route.body;
  if (bodySpec === undefined) {
    if (issues.length > 0) return new RequestValidationError(issues);
    return route.handle({ params, body: undefined });
  }
  return readBody(req, limits.bodyBytesMax).then((bytes) => {
    // As in the reference, the body is decoded before anything is validated: a JSON syntax error
    // (or undecodable bytes) is reported alone, even when a path parameter is also wrong.
    const decoded = decodeBody(bytes, req.headers['content-type'], limits);
    const body =
      decoded.kind === 'text'
        ? bodySpec.fromRawText(decoded.text, ['body'], issues)
        : bodySpec.fromBody(decoded.kind === 'json' ? decoded.value : undefined, ['body'], issues);
    if (issues.length > 0) return new RequestValidationError(issues);
    return route.handle({ params, body });
  });
}

function writeReply(res: ServerResponse, reply: Reply): void {
  if (reply.status === 204 || reply.body === undefined) {
    // D5: a 204 carries neither a body nor a Content-Type, even when the handler produced a value.
    res.writeHead(reply.status, reply.status === 204 ? undefined : { 'Content-Length': 0 });
    res.end();
    return;
  }
  res.writeHead(reply.status, {
    'Content-Type': reply.contentType ?? JSON_TYPE,
    'Content-Length': Buffer.byteLength(reply.body),
  });
  res.end(reply.body);
}
