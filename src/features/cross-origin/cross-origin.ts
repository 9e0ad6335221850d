// Cross-origin protection (docs/cors.md#cross-site-writes-refused): an unsafe request that a
// browser marks as sent by a page on another site is answered 403 before any of its work, as Go
// 1.25's net/http CrossOriginProtection decides it. CORS alone does not stop such a request: a
// plain fetch() POST needs no preflight, so the write runs and the browser only hides its response.
//
// The decision reads two headers that browsers set and pages cannot: Sec-Fetch-Site (every browser
// since 2023), else Origin. A request with neither (curl, a server, an old browser's same-origin
// request) is let through unchanged, so nothing the reference's clients send is refused. Off by
// default; on whenever --cors-origin is set, whose origins are the ones trusted here too, or alone
// with --cross-origin-protection.
import type { IncomingHttpHeaders } from 'node:http';
import { ApiError } from '../../http/errors.js';
import type { Call, Entered, RequestHeaderDoc, PlacedStage } from '../../http/stages/stage.js';

export interface CrossOriginPolicy {
  /** Origins (`scheme://host[:port]`, as the browser sends them) whose pages may write: the CORS list. */
  readonly trusted: ReadonlySet<string>;
}

export const crossOriginRefused = (): ApiError => new ApiError('CROSS_ORIGIN_REFUSED');

/** GET, HEAD and OPTIONS change nothing, so any page may send them (RFC 9110 §9.2.1). */
export function isSafeMethod(method: string): boolean {
  return method === 'GET' || method === 'HEAD' || method === 'OPTIONS';
}

/**
 * True when the request must be refused: an unsafe method, and either Sec-Fetch-Site says another
 * site sent it (cross-site, or same-site: a sibling subdomain is another origin too), or, without
 * Sec-Fetch-Site, an Origin that is neither the request's own Host nor trusted.
 */
export function refusesCrossOrigin(
  policy: CrossOriginPolicy,
  method: string,
  headers: IncomingHttpHeaders,
): boolean {
  if (isSafeMethod(method)) return false;
  const site = headers['sec-fetch-site'];
  const origin = headers.origin;
  if (site !== undefined) {
    if (site === 'same-origin' || site === 'none') return false;
    return origin === undefined || !policy.trusted.has(origin);
  }
  if (origin === undefined) return false;
  if (headers.host !== undefined && hostOf(origin) === headers.host.toLowerCase()) return false;
  return !policy.trusted.has(origin);
}

/** The host (and port, if any) an Origin names, lower-cased; undefined for `null` or a text that is no origin. */
function hostOf(origin: string): string | undefined {
  const start = origin.indexOf('://');
  return start < 0 ? undefined : origin.slice(start + 3).toLowerCase();
}

/** The stage (stage.ts): after CORS, so that the 403 carries its headers; before any work. */
export function crossOriginStage(policy: CrossOriginPolicy): PlacedStage {
  return {
    name: 'cross-origin',
    place: 'request',
    enter(call: Call): Entered {
      if (refusesCrossOrigin(policy, call.method, call.req.headers)) throw crossOriginRefused();
      return undefined;
    },
    docs: {
      requestHeaders: (route) => (isSafeMethod(route.method) ? [] : CROSS_ORIGIN_REQUEST_DOCS),
      errors: (route) => (isSafeMethod(route.method) ? [] : [crossOriginRefused()]),
    },
  };
}

const CROSS_ORIGIN_REQUEST_DOCS: readonly RequestHeaderDoc[] = [
  {
    name: 'Sec-Fetch-Site',
    description:
      'Set by browsers: cross-site or same-site from a page on an origin that is not listed is refused (403 CROSS_ORIGIN_REFUSED).',
    required: false,
    schema: { type: 'string', enum: ['cross-site', 'same-site', 'same-origin', 'none'] },
  },
  {
    name: 'Origin',
    description:
      "Set by browsers: without Sec-Fetch-Site, an Origin that is neither listed nor the service's own is refused (403 CROSS_ORIGIN_REFUSED).",
    required: false,
    schema: { type: 'string' },
  },
];
