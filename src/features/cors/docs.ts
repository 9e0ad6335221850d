// How CORS is documented (cors.ts): the headers every response carries under it, the Origin every
// operation reads, and, on every path, the preflight (OPTIONS) it answers itself: 204 for a listed
// origin, and otherwise the 405 the path gives any OPTIONS, both with the path's parameters.
import { methodNotAllowed } from '../../http/errors.js';
import type { Route } from '../../http/route.js';
import type { HeaderDoc, RequestHeaderDoc, StageDocs } from '../../http/stages/stage.js';
import { ALLOWED_HEADERS, ALLOWED_METHODS, EXPOSE_ALL, PREFLIGHT_MAX_AGE_S } from './cors.js';

const HEADERS: Readonly<Record<string, HeaderDoc>> = {
  'Access-Control-Allow-Origin': {
    description:
      'The Origin of the request, when it is one of the listed origins (--cors-origin): a page there may read this answer. Absent for any other origin.',
  },
  'Access-Control-Expose-Headers': {
    description: `For a listed Origin: \`${EXPOSE_ALL}\`, every header of the response may be read by the page (X-Request-Id, Retry-After, Idempotent-Replayed, ETag, RateLimit, RateLimit-Policy, Location, WWW-Authenticate, Allow among them).`,
    schema: { example: EXPOSE_ALL },
  },
  Vary: {
    description:
      "The request headers this answer depends on: Origin (the CORS headers follow it); on a preflight's 204, also Access-Control-Request-Method and Access-Control-Request-Headers.",
    schema: { example: 'Origin' },
  },
  'Access-Control-Allow-Methods': {
    description: 'On a preflight: the methods a page may use.',
    schema: { example: ALLOWED_METHODS },
  },
  'Access-Control-Allow-Headers': {
    description:
      'On a preflight: the request headers a page may send besides the safelisted ones (traceparent, tracestate and baggage among them, so that a page carries its trace).',
    schema: { example: ALLOWED_HEADERS },
  },
  'Access-Control-Max-Age': {
    description: 'On a preflight: seconds a browser may keep its answer.',
    schema: { example: String(PREFLIGHT_MAX_AGE_S) },
  },
};

const ON_EVERY_RESPONSE = ['Access-Control-Allow-Origin', 'Access-Control-Expose-Headers', 'Vary'];
const ON_THE_PREFLIGHT = [
  'Access-Control-Allow-Origin',
  'Access-Control-Allow-Methods',
  'Access-Control-Allow-Headers',
  'Access-Control-Max-Age',
  'Vary',
];

const ORIGIN: RequestHeaderDoc = {
  name: 'Origin',
  required: false,
  description:
    "Set by browsers: the page's origin. A listed one (--cors-origin) is named back in Access-Control-Allow-Origin, so that the page may read the answer.",
  schema: { type: 'string' },
};

const PREFLIGHT_REQUEST_HEADERS: readonly RequestHeaderDoc[] = [
  { ...ORIGIN, required: true, description: "The page's origin." },
  {
    name: 'Access-Control-Request-Method',
    required: true,
    description: 'The method the page means to use.',
    schema: { type: 'string' },
  },
  {
    name: 'Access-Control-Request-Headers',
    required: false,
    description: 'The headers the page means to send.',
    schema: { type: 'string' },
  },
];

/** A path's methods as a 405 lists them in Allow (routing.ts): each, and HEAD beside GET. */
function allowOf(routes: readonly Route[]): string {
  const methods = routes.flatMap((route) =>
    route.method === 'GET' ? ['GET', 'HEAD'] : [route.method],
  );
  return [...new Set(methods)].join(', ');
}

/** The preflight of a path, as a route for the documents (cors.ts answers it before routing). */
function preflightOf(path: string, routes: readonly Route[]): Route {
  const first = routes[0] as Route;
  return {
    method: 'OPTIONS',
    path,
    status: 204,
    params: first.params,
    body: undefined,
    idempotent: undefined,
    docs: {
      name: `preflight${path.replace(/[^A-Za-z0-9]+(.)?/g, (_, letter: string | undefined) => (letter ?? '').toUpperCase())}`,
      summary: 'CORS preflight',
      description:
        'Sent by a browser before a request a page may not make unasked. Answered 204 for an Origin in --cors-origin; from any other origin, or without Access-Control-Request-Method, it is routed as any OPTIONS is (405), and the browser refuses the call.',
      successDescription: 'The page may make the request.',
      responses: [
        {
          description:
            'Not a preflight the service allows (another origin, or no Access-Control-Request-Method): the path has no OPTIONS',
          error: methodNotAllowed(allowOf(routes)),
        },
      ],
      answeredBeforeRouting: true,
    },
    handle() {
      throw new Error('a preflight is answered by the CORS stage, never routed');
    },
  };
}

export const corsDocs: StageDocs = {
  headers: HEADERS,
  responseHeaders: (route) =>
    route.method === 'OPTIONS'
      ? [
          { names: ON_THE_PREFLIGHT, rows: (key) => key === '204', required: true },
          { names: ON_EVERY_RESPONSE, rows: (key) => key !== '204' },
        ]
      : [{ names: ON_EVERY_RESPONSE }],
  requestHeaders: (route) => (route.method === 'OPTIONS' ? PREFLIGHT_REQUEST_HEADERS : [ORIGIN]),
  operations: (path, routes) => [preflightOf(path, routes)],
};
