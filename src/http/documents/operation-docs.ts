// What the documents say of an operation beyond its bodies, derived from the code that sends or
// reads it: the headers each row's responses carry (an error's own, as the renderer gives them, and
// those the stages add, stage.ts), each described once for the whole document, and the request
// headers the operation reads (its conditions, and those the stages read).
import { ApiError } from '../errors.js';
import { REQUEST_ID_HEADER } from '../request-id.js';
import type { Route } from '../route.js';
import type { HeaderDoc, RequestHeaderDoc, Stage } from '../stages/stage.js';
import { ETAG_HEADER_DOCS } from './conditions.js';

/** The headers the contract layer itself sends, beside those the stages describe. */
const CORE_HEADERS: Readonly<Record<string, HeaderDoc>> = {
  'Retry-After': {
    description:
      'Seconds after which to send the request again; the status says why (a 409: its Idempotency-Key still in flight; a 429: over its rate limit; a 503: the database away, or the service shedding load; a 504: its deadline passed).',
  },
  'WWW-Authenticate': { description: 'The authentication the operation asks for.' },
  Allow: { description: 'The methods the path answers.' },
  ...ETAG_HEADER_DOCS,
};

const REQUEST_ID_DOC: HeaderDoc = {
  description:
    'The id of this request: the one it was sent with, if that is a usable id, else a new UUID. Logged with the request.',
};

/**
 * Every header the document names, each with its one description: the contract layer's, and
 * those each stage describes. A header two of them describe is a mistake of the code, found when
 * the document is built.
 */
export class HeaderBook {
  private readonly docs = new Map<string, HeaderDoc>(Object.entries(CORE_HEADERS));

  constructor(stages: readonly Stage[]) {
    for (const stage of stages) {
      for (const [name, doc] of Object.entries(stage.docs?.headers ?? {})) {
        if (this.docs.has(name)) throw new Error(`${name} is described twice (${stage.name})`);
        this.docs.set(name, doc);
      }
    }
  }

  /** A header object of a row: the one description, and whether every response of the row has it. */
  header(name: string, required: boolean, described?: string): Record<string, unknown> {
    const doc = this.docs.get(name);
    if (doc === undefined && described === undefined)
      throw new Error(`the documents name ${name}, which nothing describes`);
    return {
      description: described ?? doc?.description,
      ...(required ? { required: true } : {}),
      schema: { type: 'string', ...doc?.schema },
    };
  }
}

/**
 * The headers the errors shown under a row carry beyond those it declares: each named as the
 * renderer gives it, required when every response under the row carries it.
 */
export function carriedHeaders(
  shown: readonly { readonly headers: readonly string[] }[],
  declared: Readonly<Record<string, unknown>> | undefined,
  book: HeaderBook,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of new Set(shown.flatMap((example) => example.headers))) {
    if (declared?.[name] !== undefined) continue;
    out[name] = book.header(
      name,
      shown.every((example) => example.headers.includes(name)),
    );
  }
  return out;
}

/** Every row with the request id, and the headers each stage adds to the rows it names. Declared headers stay as they are. */
export function withStageHeaders(
  route: Route,
  responses: Record<string, unknown>,
  stages: readonly Stage[],
  book: HeaderBook,
): Record<string, unknown> {
  const added = stages.flatMap((stage) => stage.docs?.responseHeaders?.(route) ?? []);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(responses)) {
    const row = value as { headers?: Record<string, unknown> };
    // The row's own headers first, as declared; then the request id and each stage's.
    const headers: Record<string, unknown> = { ...row.headers };
    headers[REQUEST_ID_HEADER] ??= REQUEST_ID_REF;
    for (const entry of added) {
      if (entry.rows !== undefined && !entry.rows(key)) continue;
      for (const name of entry.names) headers[name] ??= book.header(name, entry.required === true);
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
 * Under --require-if-match (the operation may answer 428) a change of an existing item needs
 * If-Match, and a PUT that creates names none (there is nothing to match) but If-None-Match: *.
 * OpenAPI cannot say "one of the two", so neither is marked required, and each says when it is.
 */
export function conditionParameters(route: Route): Record<string, unknown>[] {
  if (!hasCode(route, 'PRECONDITION_FAILED')) return [];
  const required = hasCode(route, 'PRECONDITION_REQUIRED');
  const creates = route.method === 'PUT';
  const ifMatch = required
    ? `Required (--require-if-match) to change an existing item: the ETag you read; a stale one is refused with 412, none with 428.${creates ? ' To create an item under a free id, send If-None-Match: * instead.' : ''}`
    : 'Only if the item is still in this state: the ETag you read (or *). Otherwise 412, and nothing changes.';
  const ifNoneMatch = `On a read: 304 while one of these tags is current. On a write: refused (412) if the item holds one of them.${creates ? ` * on PUT creates only${required ? ': what a create sends under --require-if-match, where it has no ETag to send in If-Match' : ''}.` : ''}`;
  return [
    header('If-Match', false, ifMatch, required ? '"1"' : undefined),
    header('If-None-Match', false, ifNoneMatch, required && creates ? '*' : undefined),
  ];
}

function header(
  name: string,
  required: boolean,
  description: string,
  example?: string,
): Record<string, unknown> {
  return {
    name,
    in: 'header',
    required,
    description,
    schema: { type: 'string' },
    ...(example === undefined ? {} : { example }),
  };
}

/**
 * The request headers the stages read on the operation, one parameter a name (a header two stages
 * read says what each does with it), and the request id every operation reads.
 */
export function stageRequestHeaders(
  route: Route,
  stages: readonly Stage[],
): Record<string, unknown>[] {
  const byName = new Map<string, RequestHeaderDoc>();
  for (const doc of stages.flatMap((stage) => stage.docs?.requestHeaders?.(route) ?? [])) {
    const seen = byName.get(doc.name);
    byName.set(
      doc.name,
      seen === undefined
        ? doc
        : {
            ...seen,
            required: seen.required || doc.required,
            description: `${seen.description} ${doc.description}`,
          },
    );
  }
  return [
    ...[...byName.values()].map((doc) => ({
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
  headers: {
    RequestId: {
      description: REQUEST_ID_DOC.description,
      required: true,
      schema: { type: 'string' },
    },
  },
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
