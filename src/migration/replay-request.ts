// A HAR request as the kit sends it to each target, or the reason it cannot be sent. The
// request-target is taken from the recorded URL as written (no normalising of its escapes or dot
// segments), headers as recorded but those that belong to one connection, and the body as
// recorded. A request whose body was recorded truncated, or that Node's client would refuse,
// cannot be sent as it was: it is reported, never silently dropped (docs/migration.md).
import { validateHeaderName, validateHeaderValue } from 'node:http';
import type { HarHeader, HarRequestRead } from './har.js';

export interface ReplayRequest {
  readonly method: string;
  /** Path and query, exactly as recorded. */
  readonly target: string;
  readonly headers: readonly HarHeader[];
  readonly body: Buffer | undefined;
}

export type Prepared =
  | { readonly ok: true; readonly request: ReplayRequest }
  | { readonly ok: false; readonly reason: string };

/**
 * Headers of one hop, or that the kit sets itself: Host (the target's), Content-Length (the
 * body's), Accept-Encoding (answers are compared uncompressed), and HTTP/2's pseudo-headers, which
 * browsers list among a request's headers.
 */
const NOT_REPLAYED = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'upgrade',
  'accept-encoding',
]);

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const ABSOLUTE = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*([^#]*)/;
const UNSENDABLE_METHODS = new Set(['CONNECT']);

/** Path and query of a recorded URL, as written; undefined when it is no absolute http(s) URL. */
export function targetOf(url: string): string | undefined {
  if (!/^https?:\/\//i.test(url)) return undefined;
  const match = ABSOLUTE.exec(url);
  if (match === null) return undefined;
  const rest = match[1] ?? '';
  return rest === '' ? '/' : rest.startsWith('?') ? `/${rest}` : rest;
}

function bodyOf(request: HarRequestRead): Buffer | string | undefined {
  const data = request.postData;
  if (data === undefined) return undefined;
  if (data._truncated === true) return 'its body was recorded truncated';
  if (data.text !== undefined) {
    if (data._encoding === undefined) return Buffer.from(data.text, 'utf8');
    if (data._encoding !== 'base64') return `its body's encoding ${data._encoding} is not base64`;
    return Buffer.from(data.text, 'base64');
  }
  const params = data.params ?? [];
  if (params.length === 0) return undefined;
  if (!data.mimeType.toLowerCase().startsWith('application/x-www-form-urlencoded'))
    return `its body is recorded as params only, under ${data.mimeType || 'no media type'}`;
  return Buffer.from(
    new URLSearchParams(params.map((p): [string, string] => [p.name, p.value])).toString(),
    'utf8',
  );
}

function headerProblem(header: HarHeader): string | undefined {
  try {
    validateHeaderName(header.name);
    validateHeaderValue(header.name, header.value);
    return undefined;
  } catch {
    return `its header ${JSON.stringify(header.name)} cannot be sent`;
  }
}

/** The request as the kit sends it, or why it cannot be sent. */
export function prepare(request: HarRequestRead): Prepared {
  const method = request.method;
  if (!TOKEN.test(method) || UNSENDABLE_METHODS.has(method.toUpperCase()))
    return { ok: false, reason: `its method ${JSON.stringify(method)} cannot be replayed` };
  const target = targetOf(request.url);
  if (target === undefined)
    return { ok: false, reason: `its URL ${JSON.stringify(request.url)} is no http(s) URL` };
  // Node's client refuses a request-target with spaces or control characters.
  if (/[\u0000-\u0020\u007f-\uffff]/.test(target))
    return { ok: false, reason: 'its URL holds characters HTTP/1.1 cannot send unescaped' };
  const headers = request.headers.filter(
    (header) => !header.name.startsWith(':') && !NOT_REPLAYED.has(header.name.toLowerCase()),
  );
  for (const header of headers) {
    const problem = headerProblem(header);
    if (problem !== undefined) return { ok: false, reason: problem };
  }
  const body = bodyOf(request);
  if (typeof body === 'string') return { ok: false, reason: body };
  return { ok: true, request: { method, target, headers, body } };
}
