// Rendering, the pipeline's last step (app.ts writes what this makes): a reply or a rendered error
// as status, header list and body. The header list is made for each response, so that the stages'
// headers are pushed onto it rather than copied. Node takes a flat list (name, value, …) without
// the walk over an object's keys, and a list literal is built without the megamorphic stores that
// an object spread with computed keys costs.
import { Buffer } from 'node:buffer';
import { ETAG_HEADER } from './conditions.js';
import { JSON_TYPE, type RenderedError } from './render.js';
import { REQUEST_ID_HEADER } from './request-id.js';
import type { Reply } from './route.js';
import type { HeaderList } from './stages/stage.js';

/** The status reported (never sent) for a request its client abandoned mid-body. */
export const CLIENT_CLOSED_REQUEST = 499;

/** Written when a response could not be: fixed, so that writing it cannot fail in turn. */
export const INTERNAL_ERROR_TEXT = 'Internal Server Error';

export function plainInternalErrorHeaders(requestId: string): HeaderList {
  return [
    'Content-Type',
    'text/plain; charset=utf-8',
    'Content-Length',
    INTERNAL_ERROR_TEXT.length,
    REQUEST_ID_HEADER,
    requestId,
  ];
}

/** Set by the pipeline on every response that has a body (by lower-case name): a reply's or an error's own headers never replace them. */
const PIPELINE_HEADERS: ReadonlySet<string> = new Set([
  'content-type',
  'content-length',
  REQUEST_ID_HEADER.toLowerCase(),
]);

/** A reply's or an error's own headers (Allow, WWW-Authenticate, Idempotent-Replayed…) as a list, those of the pipeline left out. */
function ownHeaders(headers: Readonly<Record<string, string>> | undefined): HeaderList {
  const list: HeaderList = [];
  if (headers === undefined) return list;
  for (const name of Object.keys(headers))
    if (!PIPELINE_HEADERS.has(name.toLowerCase())) list.push(name, headers[name] as string);
  return list;
}

/** The headers of a response with a body: its own first, then Content-Type, Content-Length and X-Request-Id. */
function bodyHeaders(
  own: Readonly<Record<string, string>> | undefined,
  contentType: string,
  bytes: number,
  requestId: string,
): HeaderList {
  const pipeline: HeaderList = [
    'Content-Type',
    contentType,
    'Content-Length',
    bytes,
    REQUEST_ID_HEADER,
    requestId,
  ];
  return own === undefined ? pipeline : ownHeaders(own).concat(pipeline);
}

/** The headers with `Connection: close` in place of any Connection header they had, whatever its case or value. */
export function withConnectionClose(headers: HeaderList): HeaderList {
  const list: HeaderList = [];
  for (let i = 0; i < headers.length; i += 2) {
    if (String(headers[i]).toLowerCase() !== 'connection')
      list.push(headers[i] as HeaderList[number], headers[i + 1] as HeaderList[number]);
  }
  list.push('Connection', 'close');
  return list;
}

/** An error's headers: those of any response with a body, and `Connection: close` on a 413, so that the rest of a body too large to read ends with the connection. */
export function responseHeaders(
  rendered: RenderedError,
  requestId: string,
  bytes: number,
): HeaderList {
  const headers = bodyHeaders(rendered.headers, rendered.contentType, bytes, requestId);
  return rendered.status === 413 ? withConnectionClose(headers) : headers;
}

/** Where a response goes: app.ts's send(), which sets it on its call. */
export type ResponseSink<C> = (
  call: C,
  status: number,
  headers: HeaderList,
  body: string | Buffer | undefined,
  bytes: number,
) => void;

/** A reply as a response, handed to `send` (no record of its own: one less allocation a request). */
export function sendReply<C>(
  call: C,
  reply: Reply,
  requestId: string,
  send: ResponseSink<C>,
): void {
  if (reply.status === 304) {
    // RFC 9110 §15.4.5: no body, and no Content-Length (it would have to be the 200's); the ETag
    // stays.
    return send(
      call,
      304,
      reply.etag === undefined
        ? [REQUEST_ID_HEADER, requestId]
        : [ETAG_HEADER, reply.etag, REQUEST_ID_HEADER, requestId],
      undefined,
      0,
    );
  }
  if (reply.status === 204 || reply.body === undefined) {
    // D5: a 204 carries neither a body nor a Content-Type, even when the handler produced a value.
    // The reply's own headers stay: a replayed DELETE's 204 says it is a replay.
    const pipeline: HeaderList =
      reply.status === 204
        ? [REQUEST_ID_HEADER, requestId]
        : ['Content-Length', 0, REQUEST_ID_HEADER, requestId];
    return send(
      call,
      reply.status,
      reply.headers === undefined ? pipeline : ownHeaders(reply.headers).concat(pipeline),
      undefined,
      0,
    );
  }
  const bytes = Buffer.byteLength(reply.body);
  const headers = bodyHeaders(reply.headers, reply.contentType ?? JSON_TYPE, bytes, requestId);
  if (reply.etag !== undefined) headers.push(ETAG_HEADER, reply.etag);
  send(call, reply.status, headers, reply.body, bytes);
}
