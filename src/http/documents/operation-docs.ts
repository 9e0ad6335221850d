// What the documents say of an operation beyond its bodies, derived from the code that sends or
// reads it: the headers each row's responses carry (an error's own, as the renderer gives them, and
// those the stages add, stage.ts), the request headers the operation reads (its conditions, and
// those the stages read), and the preflight every path answers when CORS is on.
import { PREFLIGHT_HEADER_DOCS } from '../../features/cors/cors.js';
import { ApiError } from '../errors.js';
import { REQUEST_ID_HEADER } from '../request-id.js';
import type { Route } from '../route.js';
import type { HeaderDoc, RequestHeaderDoc, Stage } from '../stages/stage.js';

/** What each header an error answer may carry means, by name. */
const CARRIED: Readonly<Record<string, string>> = {
  'Retry-After':
    'Seconds after which to send the request again: on a 503 (the database away, or the service shedding load), a 504 (its deadline passed), a 409 (its Idempotency-Key still in flight) or a 429 (over its rate limit).',
  'WWW-Authenticate': 'The authentication the operation asks for.',
  RateLimit:
    'What is left of the rate limit: r requests may be sent at once now, and t seconds say when it grows.',
  'RateLimit-Policy': 'The rate limit on this kind of request: its quota q and window w (seconds).',
  'Idempotent-Replayed':
    'Present (true) when this answer is the recorded answer of an earlier request with the same Idempotency-Key.',
  Allow: 'The methods the path answers.',
};

const REQUEST_ID_DOC: HeaderDoc = {
  description:
    'The id of this request: the one it was sent with, if that is a usable id, else a new UUID. Logged with the request.',
  required: true,
};

function headerObject(doc: HeaderDoc): Record<string, unknown> {
  return {
    description: doc.description,
    ...(doc.required === true ? { required: true } : {}),
    schema:
      doc.example === undefined ? { type: 'string' } : { type: 'string', example: doc.example },
  };
}

/**
 * The headers the errors shown under a row carry beyond those it declares: each named as the
 * renderer gives it, required when every response under the row carries it.
 */
export function carriedHeaders(
  shown: readonly { readonly headers: readonly string[] }[],
  declared: Readonly<Record<string, unknown>> | undefined,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of new Set(shown.flatMap((example) => example.headers))) {
    if (declared?.[name] !== undefined) continue;
    const required = shown.every((example) => example.headers.includes(name));
    out[name] = headerObject({ description: CARRIED[name] ?? 'Sent with this answer.', required });
  }
  return out;
}

/** Every row with the request id, and the headers each stage adds to the rows it names. Declared headers stay as they are. */
export function withStageHeaders(
  route: Route,
  responses: Record<string, unknown>,
  stages: readonly Stage[],
): Record<string, unknown> {
  const added = stages
    .map((stage) => stage.docs?.responseHeaders?.(route))
    .filter((entry) => entry !== undefined);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(responses)) {
    const row = value as { headers?: Record<string, unknown> };
    // The row's own headers first, as declared; then the request id and each stage's.
    const headers: Record<string, unknown> = { ...row.headers };
    headers[REQUEST_ID_HEADER] ??= REQUEST_ID_REF;
    for (const entry of added) {
      if (!entry.rows(key)) continue;
      for (const [name, doc] of Object.entries(entry.headers)) headers[name] ??= headerObject(doc);
    }
    out[key] = { ...row, headers };
  }
  return out;
}

const hasCode = (route: Route, code: string): boolean =>
  [
    ...(route.docs.otherErrors ?? []),
    ...(route.docs.responses ?? []).map((declared) => declared.error),
  ].some((error) => error instanceof ApiError && error.code === code);

/**
 * If-Match and If-None-Match, on the operations that judge them (those that may answer 412).
 * Under --require-if-match (the operation may answer 428) If-Match is required, and its example
 * is the tag of the first item as a fresh service has it, so that the document's own example
 * request is one the service accepts.
 */
export function conditionParameters(route: Route): Record<string, unknown>[] {
  if (!hasCode(route, 'PRECONDITION_FAILED')) return [];
  const required = hasCode(route, 'PRECONDITION_REQUIRED');
  return [
    {
      name: 'If-Match',
      in: 'header',
      required,
      description: required
        ? 'Required (--require-if-match) to change an existing item: the ETag you read. A stale one is refused with 412, none with 428.'
        : 'Only if the item is still in this state: the ETag you read (or *). Otherwise 412, and nothing changes.',
      schema: { type: 'string' },
      ...(required ? { example: '"1"' } : {}),
    },
    {
      name: 'If-None-Match',
      in: 'header',
      required: false,
      description:
        'On a read: 304 while one of these tags is current. On a write: refused (412) if the item holds one of them; * on PUT creates only.',
      schema: { type: 'string' },
    },
  ];
}

/** The request headers the stages read on the operation, and the request id every operation reads. */
export function stageRequestHeaders(
  route: Route,
  stages: readonly Stage[],
): Record<string, unknown>[] {
  const docs: RequestHeaderDoc[] = stages.flatMap(
    (stage) => stage.docs?.requestHeaders?.(route) ?? [],
  );
  return [
    ...docs.map((doc) => ({
      name: doc.name,
      in: 'header',
      required: doc.required,
      description: doc.description,
      schema: doc.schema,
      ...(doc.example === undefined ? {} : { example: doc.example }),
    })),
    { $ref: '#/components/parameters/RequestId' },
  ];
}

const REQUEST_ID_REF = { $ref: '#/components/headers/RequestId' };

/** What every operation shares, named once: the request id, sent and answered. */
export const SHARED_COMPONENTS = {
  headers: { RequestId: headerObject(REQUEST_ID_DOC) },
  parameters: {
    RequestId: {
      name: REQUEST_ID_HEADER,
      in: 'header',
      required: false,
      description:
        'An id for this request, echoed in the answer and the log (a new UUID when it is missing, too long or not printable).',
      schema: { type: 'string' },
    },
  },
} as const;

/** The preflight (OPTIONS) of a path, answered 204 for a listed origin when CORS is on. */
export function preflightOperation(path: string): Record<string, unknown> {
  const header = (
    name: string,
    required: boolean,
    description: string,
  ): Record<string, unknown> => ({
    name,
    in: 'header',
    required,
    description,
    schema: { type: 'string' },
  });
  return {
    summary: 'CORS preflight',
    operationId: `preflight${path.replace(/[^A-Za-z0-9]+(.)?/g, (_, letter: string | undefined) => (letter ?? '').toUpperCase())}`,
    description:
      'Sent by a browser before a request a page may not make unasked. Answered 204 for an Origin in --cors-origin; from any other origin it is ' +
      'routed as any OPTIONS is (405), and the browser refuses the call.',
    parameters: [
      header('Origin', true, "The page's origin."),
      header('Access-Control-Request-Method', true, 'The method the page means to use.'),
      header('Access-Control-Request-Headers', false, 'The headers the page means to send.'),
    ],
    responses: {
      '204': {
        description: 'The page may make the request.',
        headers: {
          [REQUEST_ID_HEADER]: REQUEST_ID_REF,
          ...Object.fromEntries(
            Object.entries(PREFLIGHT_HEADER_DOCS).map(([name, doc]) => [name, headerObject(doc)]),
          ),
        },
      },
    },
  };
}
