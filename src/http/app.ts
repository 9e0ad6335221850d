// The request pipeline shared by every service: route, validate, call the handler, write the
// answer, and send any error through the one renderer.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../log.js';
import { decodeBody, readBody, type BodyLimits } from './body.js';
import { methodNotAllowed, notFound, RequestValidationError } from './errors.js';
import { JSON_TYPE, renderError, type ErrorFormat } from './render.js';
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
  let requestCount = 0;

  async function handle(req: IncomingMessage, res: ServerResponse, requestNumber: number): Promise<void> {
    try {
      const method = req.method ?? 'GET';
      const match = router.match(method, req.url ?? '/');
      switch (match.kind) {
        case 'route':
          writeReply(res, await runRoute(match.route, match.params, req, limits));
          return;
        case 'redirect':
          res.writeHead(307, { Location: match.location, 'Content-Length': '0' });
          res.end();
          return;
        case 'method-not-allowed':
          throw methodNotAllowed(match.allow);
        case 'not-found':
          throw notFound();
      }
    } catch (error) {
      try {
        sendError(res, error, requestId(requestNumber), req);
      } catch (failure) {
        // Rendering itself failed: still no crash and nothing internal for the client.
        log.error('failed to render an error', { requestId: requestId(requestNumber), error: failure });
        if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end('Internal Server Error');
      }
    }
  }

  function sendError(res: ServerResponse, error: unknown, id: string, req: IncomingMessage): void {
    const rendered = renderError(error, errorFormat);
    if (rendered.unexpected) log.error('unhandled failure', { requestId: id, method: req.method, url: req.url, error });
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const headers: Record<string, string | number> = { ...rendered.headers };
    headers['Content-Type'] = rendered.contentType;
    headers['Content-Length'] = Buffer.byteLength(rendered.body);
    if (rendered.status === 413) headers.Connection = 'close';
    res.writeHead(rendered.status, headers);
    res.end(rendered.body);
  }

  return (req, res) => {
    requestCount += 1;
    void handle(req, res, requestCount);
  };
}

const processTag = process.pid.toString(36);
function requestId(requestNumber: number): string {
  return `${processTag}-${requestNumber.toString(36)}`;
}

async function runRoute(
  route: Route,
  rawParams: Readonly<Record<string, string>>,
  req: IncomingMessage,
  limits: BodyLimits,
): Promise<Reply> {
  const issues: Issues = [];
  const params: Record<string, unknown> = {};
  for (const [name, spec] of route.params) {
    params[name] = spec.fromText(rawParams[name] as string, ['path', name], issues);
  }
  let body: unknown;
  if (route.body !== undefined) {
    // As in the reference, the body is decoded before anything is validated: a JSON syntax error
    // (or undecodable bytes) is reported alone, even when a path parameter is also wrong.
    const decoded = decodeBody(await readBody(req, limits.bodyBytesMax), req.headers['content-type'], limits);
    body =
      decoded.kind === 'text'
        ? route.body.fromRawText(decoded.text, ['body'], issues)
        : route.body.fromBody(decoded.kind === 'json' ? decoded.value : undefined, ['body'], issues);
  }
  if (issues.length > 0) throw new RequestValidationError(issues);
  return route.handle({ params, body });
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
