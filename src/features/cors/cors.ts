// Cross-origin requests from browsers (the Fetch standard's CORS protocol), off unless the service
// is given the origins it trusts (--cors-origin). The reference has none, so the default changes
// nothing. When on, the headers are added where every response is written (app.ts), not by a
// middleware beside the routes: an error, a 404, a 413 or the 500 of a failure carries them too,
// so that a page sees the real status and body instead of an opaque network error (the frameworks'
// usual bug: Starlette #1116, FastAPI #775).

export interface CorsPolicy {
  /** Exact origins (`scheme://host[:port]`) whose pages may call the service and read its responses. */
  readonly origins: ReadonlySet<string>;
}

/**
 * The response headers a page may read: all of them. `*` means all only for a request without
 * credentials, and these services never allow credentials (no Access-Control-Allow-Credentials), so
 * a credentialed call fails whatever this says. A list would say the same at a cost: node:http
 * checks every character of every header value it writes, on every response to a page.
 */
export const EXPOSE_ALL = '*';

export const ALLOWED_METHODS = 'GET, HEAD, POST, PUT, DELETE';
/**
 * The request headers a page may send besides the CORS-safelisted ones: the services' own, and
 * the W3C Trace Context's and Baggage's, so that a page can carry its trace into the services.
 */
export const ALLOWED_HEADERS =
  'Content-Type, Idempotency-Key, X-Request-Id, If-Match, If-None-Match, traceparent, tracestate, baggage';
/** How long a browser may keep a preflight's answer: ten minutes, Chromium's own cap. */
export const PREFLIGHT_MAX_AGE_S = 600;

/** Each origin as the browser sends it, or an error message naming the first that is not one. */
export function parseCorsOrigins(text: string): CorsPolicy | string {
  const origins = new Set<string>();
  for (const item of text.split(',').map((part) => part.trim())) {
    let url: URL | undefined;
    try {
      url = new URL(item);
    } catch {
      url = undefined;
    }
    if (
      url === undefined ||
      (url.protocol !== 'http:' && url.protocol !== 'https:') ||
      url.origin !== item
    ) {
      return `"${item}" is not an origin: write scheme://host[:port], as a browser sends it in Origin (no path, no trailing slash)`;
    }
    origins.add(item);
  }
  return { origins };
}

/**
 * The headers a response carries under the policy: for an allowed Origin,
 * Access-Control-Allow-Origin and Access-Control-Expose-Headers; and Vary: Origin always, since the
 * response depends on it.
 */
export function corsHeaders(policy: CorsPolicy, origin: string | undefined): string[] {
  if (origin === undefined || !policy.origins.has(origin)) return ['Vary', 'Origin'];
  return [
    'Access-Control-Allow-Origin',
    origin,
    'Access-Control-Expose-Headers',
    EXPOSE_ALL,
    'Vary',
    'Origin',
  ];
}

/**
 * The headers of the 204 that answers a preflight (OPTIONS with Access-Control-Request-Method) from
 * an allowed origin; undefined for any other request, which is then routed as usual (a preflight
 * from another origin gets the 405 the path gives OPTIONS, and the browser refuses the call).
 */
export function preflightHeaders(
  policy: CorsPolicy,
  origin: string | undefined,
  requestMethod: string | undefined,
): string[] | undefined {
  if (requestMethod === undefined || origin === undefined || !policy.origins.has(origin))
    return undefined;
  return [
    'Access-Control-Allow-Origin',
    origin,
    'Access-Control-Allow-Methods',
    ALLOWED_METHODS,
    'Access-Control-Allow-Headers',
    ALLOWED_HEADERS,
    'Access-Control-Max-Age',
    String(PREFLIGHT_MAX_AGE_S),
    'Vary',
    'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
  ];
}

export function pairs(list: readonly string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i < list.length; i += 2) out.push([list[i] as string, list[i + 1] as string]);
  return out;
}
