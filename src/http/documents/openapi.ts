// The OpenAPI 3.1 document, drawn from the route declarations and the active error format. Rules:
// every response a documented operation can give is described by the document and validates against
// it (test/http/openapi-responses.test.ts replays the conformance cases to prove it), and every row
// shows examples that are real responses, rendered by the one renderer in the active format, each
// under the row a client reads it under (test/http/openapi-examples.test.ts).
import { catalogueEntries, ERROR_CATALOGUE, problemType, type ErrorCode } from '../catalogue.js';
import {
  errorSchemas,
  FORMAT_SCHEMA_NAMES,
  schemaRef,
  type FormatSchemaNames,
} from './error-schemas.js';
import { ApiError, bodyNotParsable, bodyTooLarge, InvalidRequest } from '../errors.js';
import { keyInFlight, keyReused } from '../../features/idempotency/gate.js';
import {
  carriedHeaders,
  conditionParameters,
  preflightOperation,
  SHARED_COMPONENTS,
  stageRequestHeaders,
  withStageHeaders,
} from './operation-docs.js';
import type { Stage } from '../stages/stage.js';
import { idempotencyKeyInvalid, idempotencyKeyRequired } from '../../features/idempotency/key.js';
import {
  idempotencyKeyParameter,
  KEY_ANSWERS_DESCRIPTION,
  REPLAYED_HEADER_DOC,
  RETRY_AFTER_HEADER_DOC,
} from '../../features/idempotency/docs.js';
import { ETAG_HEADER_DOC, NOT_MODIFIED_ROW } from './conditions.js';
import { JsonObject } from '../json/json-value.js';
import { MESSAGES } from '../validation/lax.js';
import { renderError, type ErrorFormat } from '../render.js';
import { keyRequired, type DocumentedError, type Route } from '../route.js';
import type { Issues, JsonSchema } from '../validation/schema.js';
import type { RateLimits } from '../../rate-limits/policy.js';
import {
  limitedKind,
  RATE_LIMITED_DESCRIPTION,
  RATE_LIMITED_EXAMPLE,
  rateLimitHeaderDocs,
  RETRY_AFTER_429_DOC,
} from '../../features/rate-limits/docs.js';

export interface OpenApiOptions {
  readonly title: string;
  readonly version: string;
  readonly routes: readonly Route[];
  /** Schemas the routes name as their response models. */
  readonly components: Readonly<Record<string, JsonSchema>>;
  readonly errorFormat: ErrorFormat;
  /** Idempotent operations refuse a request without an Idempotency-Key. */
  readonly idempotencyKeyRequired?: boolean;
  /** Rate limits on the operations (--rate-limit): the 429 row. */
  readonly rateLimits?: RateLimits;
  /**
   * The pipeline's stages (stage.ts): each declares the errors it may answer on an operation, the
   * headers it adds to its responses and the request headers it reads (operation-docs.ts applies
   * them).
   */
  readonly stages?: readonly Stage[];
  /** CORS is on: each path documents its preflight (OPTIONS). */
  readonly cors?: boolean;
}

export interface ApiDescription {
  readonly openapi: Record<string, unknown>;
  /** The wire codes the document's responses carry, in the catalogue's order. */
  readonly codes: readonly ErrorCode[];
}

const LICENSE = { name: 'MIT', identifier: 'MIT' };
const JSON_MEDIA_TYPE = 'application/json';
const PLAIN_TEXT = 'text/plain';

/** The plain-text 500 of an unhandled failure, when no catch-all renders it as JSON. */
const PLAIN_TEXT_500_SCHEMA: JsonSchema = { type: 'string', const: 'Internal Server Error' };

/** What an unhandled failure is shown as: an Error the service did not mean to raise. */
const UNHANDLED = new Error('an unexpected failure');

/** A text no integer parameter takes: the path input of an operation's typical 422. */
const NOT_AN_INTEGER = 'abc';

/** Which of the format's schemas a response's body follows. */
type Kind = 'validation' | 'error' | 'codedError' | 'plain';

/** One answer the document shows: an error, rendered in the active format. */
interface Shown {
  /** The wire code it stands for (INTERNAL for an unhandled failure): its name among a row's examples. */
  readonly code: ErrorCode;
  readonly status: number;
  /** What it is, for a reader: "Todo not found", "Invalid Idempotency-Key". */
  readonly label: string;
  readonly mediaType: string;
  readonly kind: Kind;
  readonly value: unknown;
  /** The headers the response carries beside the pipeline's own (Retry-After, WWW-Authenticate, RateLimit…). */
  readonly headers: readonly string[];
}

/** An error row: its own responses first, then those placed in it because a client reads them under it. */
interface Row {
  readonly description: string;
  readonly headers?: Readonly<Record<string, unknown>>;
  readonly shown: Shown[];
  /** How many of `shown` are the row's own; the description names the others. */
  readonly own: number;
  /** The description names the responses placed in the row (a three-digit row: a reader takes its description for all it answers). */
  readonly namesOthers: boolean;
}

/** An error as the active format answers it: through the one renderer, as the service does. */
function show(error: Error | InvalidRequest, format: ErrorFormat): Shown {
  const rendered = renderError(error, format);
  const mediaType = rendered.contentType.split(';')[0] ?? '';
  const code: ErrorCode =
    error instanceof InvalidRequest
      ? 'VALIDATION_FAILED'
      : error instanceof ApiError
        ? error.code
        : 'INTERNAL';
  const entry = ERROR_CATALOGUE[code];
  const kind: Kind =
    mediaType === PLAIN_TEXT
      ? 'plain'
      : entry.inDefault === 'validation'
        ? 'validation'
        : format.name === 'default' && entry.inDefault === 'coded'
          ? 'codedError'
          : 'error';
  let label: string = entry.own
    ? entry.title
    : error instanceof ApiError
      ? error.detail
      : 'An unhandled failure';
  if (rendered.unexpected && error instanceof ApiError)
    label = `${label}: not recognised in this format, an unhandled failure`;
  return {
    code,
    status: rendered.status,
    label,
    mediaType,
    kind,
    value: kind === 'plain' ? rendered.body : JSON.parse(rendered.body),
    headers: Object.keys(rendered.headers),
  };
}

/**
 * The validation failure typical of an operation, by its own validators: a body without its
 * required fields (or without a body at all), else a path parameter given a text that is not an
 * integer. An operation whose every input value is valid (a string path parameter takes any text)
 * still lists 422, as FastAPI does; it never answers it, and its example is pydantic's item for a
 * missing parameter.
 */
function typicalInvalidRequest(route: Route): {
  readonly invalid: InvalidRequest;
  readonly reachable: boolean;
} {
  const issues: Issues = [];
  if (route.body !== undefined) {
    route.body.fromBody(new JsonObject([]), ['body'], issues);
    if (issues.length === 0) route.body.fromBody(undefined, ['body'], issues);
  }
  for (const [, spec, loc] of route.params)
    if (issues.length === 0) spec.fromText(NOT_AN_INTEGER, loc, issues);
  if (issues.length > 0) return { invalid: new InvalidRequest(issues), reachable: true };
  const loc = route.params[0]?.[2] ?? ['body'];
  return {
    invalid: new InvalidRequest([{ type: 'missing', loc, msg: MESSAGES.missing, input: null }]),
    reachable: false,
  };
}

/** The errors an operation answers beside its declared rows and its typical 422: the stages' first. */
function otherErrorsOf(route: Route, keysRequired: boolean, stages: readonly Stage[]): Error[] {
  const others: Error[] = [];
  for (const stage of stages) others.push(...(stage.docs?.errors?.(route) ?? []));
  if (route.idempotent !== undefined) {
    others.push(idempotencyKeyInvalid());
    if (keyRequired(route.idempotent, keysRequired)) others.push(idempotencyKeyRequired());
    others.push(keyInFlight(), keyReused());
  }
  others.push(...(route.docs.otherErrors ?? []));
  if (route.body !== undefined) others.push(bodyNotParsable(), bodyTooLarge());
  others.push(UNHANDLED);
  return others;
}

/**
 * FastAPI's rules (the success code, any declared extra response, and 422 where the operation takes
 * input), except that an operation that never succeeds lists no success (D10), and each error is
 * drawn as the active format really renders it. Beyond the three-digit codes (the contract fixes
 * those), a `2XX` range describes another success an operation gives (PUT's 201), `4XX` the other
 * client errors of an operation that takes an Idempotency-Key, and `default` every other error (an
 * unknown to-do's 404, a 409, a 503 while the database is away, an unhandled failure).
 *
 * Each error the operation answers is rendered once and shown as an example of the row a client
 * reads its status under (the exact code, else its range, else `default`); a row's schema is the
 * union of its examples' schemas, and the code, problem-type and status enums of the error schemas
 * are the codes the examples carry. So the document shows and allows exactly what the service
 * answers.
 */
export function describeApi(options: OpenApiOptions): ApiDescription {
  const format = options.errorFormat;
  const names = FORMAT_SCHEMA_NAMES[format.name];
  const keysRequired = options.idempotencyKeyRequired === true;
  const stages = options.stages ?? [];
  const used = new Set<string>();
  // The schemas a document may name beside the error bodies: response models and request bodies.
  const known: Record<string, JsonSchema> = { ...options.components };
  const codes = new Set<ErrorCode>();
  const paths: Record<string, Record<string, unknown>> = {};
  const component = (name: string): JsonSchema => {
    if (known[name] === undefined) throw new Error(`no component schema named ${name}`);
    used.add(name);
    return schemaRef(name);
  };
  const rowObject = (row: Row): Record<string, unknown> => {
    for (const shown of row.shown) if (shown.mediaType !== PLAIN_TEXT) codes.add(shown.code);
    const content = contentOf(row.shown, names);
    for (const name of content.schemas) used.add(name);
    const others = row.namesOthers ? row.shown.slice(row.own).map((shown) => shown.label) : [];
    const description =
      others.length === 0
        ? row.description
        : `${row.description}. Also under this status: ${others.join('; ')}.`;
    const headers = { ...row.headers, ...carriedHeaders(row.shown, row.headers) };
    return {
      description,
      ...(Object.keys(headers).length === 0 ? {} : { headers }),
      content: content.content,
    };
  };

  for (const route of options.routes) {
    if (route.docs.hidden === true) continue;
    const name = route.docs.name;
    const operation: Record<string, unknown> = {
      summary: titleCase(name),
      operationId: camelCase(name),
    };
    if (route.docs.description !== undefined) operation.description = route.docs.description;
    const parameters = parametersOf(route, keysRequired, stages);
    if (parameters.length > 0) operation.parameters = parameters;
    if (route.body !== undefined) {
      used.add(route.body.name);
      known[route.body.name] = route.body.jsonSchema;
      operation.requestBody = {
        content: { [JSON_MEDIA_TYPE]: { schema: schemaRef(route.body.name) } },
        required: true,
      };
    }

    const limitHeaders = rateLimitHeadersOf(route, options.rateLimits);
    const responses = successRows(route, limitHeaders ?? {}, component);
    const rows = errorRows(route, format, keysRequired, stages, limitHeaders);
    for (const [key, row] of rows) if (row.shown.length > 0) responses[key] = rowObject(row);
    operation.responses = withStageHeaders(route, responses, stages);
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation;
    if (options.cors === true)
      (paths[route.path] as Record<string, unknown>).options ??= preflightOperation(route.path);
  }

  const carried = catalogueEntries()
    .map(([code]) => code)
    .filter((code) => codes.has(code));
  const schemas = componentSchemas(format.name, codes, used, known);
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: options.title,
        version: options.version,
        description: describeErrors(format, carried),
        license: LICENSE,
      },
      // No `servers`: the document is served by the service it describes, and without the member a
      // client resolves paths against the document's own origin (OpenAPI's default server, "/"),
      // while Swagger UI shows no server selector with one useless choice.
      // No operation takes credentials (the contract's Authentication section); said, not left out.
      security: [],
      paths,
      components: { schemas, ...SHARED_COMPONENTS },
    },
    codes: carried,
  };
}

/** The rate-limit headers of a limited operation's answers; undefined for one not limited. */
function rateLimitHeadersOf(
  route: Route,
  rateLimits: RateLimits | undefined,
): Readonly<Record<string, unknown>> | undefined {
  const limited = limitedKind(route.method, rateLimits);
  if (limited === undefined) return undefined;
  return rateLimits === undefined ? {} : rateLimitHeaderDocs(limited, rateLimits);
}

/** An operation's parameters: its path's, then the headers it reads (its key, its conditions, the stages'). */
function parametersOf(
  route: Route,
  keysRequired: boolean,
  stages: readonly Stage[],
): Record<string, unknown>[] {
  const parameters: Record<string, unknown>[] = route.params.map(([param, spec]) => ({
    name: param,
    in: 'path',
    required: true,
    schema: spec.jsonSchema,
  }));
  if (route.idempotent)
    parameters.push(idempotencyKeyParameter(keyRequired(route.idempotent, keysRequired)));
  parameters.push(...conditionParameters(route), ...stageRequestHeaders(route, stages));
  return parameters;
}

/** The success rows: the declared status, another success as 2XX, a tagged read's 304 as 3XX. */
function successRows(
  route: Route,
  limitHeaders: Readonly<Record<string, unknown>>,
  component: (name: string) => JsonSchema,
): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  const success = (description: string): Record<string, unknown> => {
    if (route.status === 204) return { description };
    const model = route.docs.responseModel;
    const example = route.docs.example;
    if (example === undefined)
      throw new Error(`${route.method} ${route.path} documents a success body without an example`);
    const schema = model === undefined ? {} : component(model);
    return {
      description,
      content: {
        [JSON_MEDIA_TYPE]: {
          schema,
          examples: { [model ?? 'body']: { summary: description, value: JSON.parse(example) } },
        },
      },
    };
  };
  const tagged = route.docs.tagged !== undefined;
  if (route.docs.succeeds !== false) {
    const row = success('Successful Response');
    const headers = {
      ...(route.idempotent ? REPLAYED_HEADER_DOC : {}),
      ...(tagged ? ETAG_HEADER_DOC : {}),
      ...limitHeaders,
    };
    responses[String(route.status)] = Object.keys(headers).length === 0 ? row : { ...row, headers };
  }
  if (route.docs.otherSuccess !== undefined)
    responses['2XX'] = tagged
      ? { ...success(route.docs.otherSuccess), headers: ETAG_HEADER_DOC }
      : success(route.docs.otherSuccess);
  if (route.docs.tagged === 'read') responses['3XX'] = NOT_MODIFIED_ROW;
  return responses;
}

/** The schemas the document names: the format's error bodies it uses, and the services' own. */
function componentSchemas(
  format: ErrorFormat['name'],
  codes: ReadonlySet<ErrorCode>,
  used: Set<string>,
  known: Readonly<Record<string, JsonSchema>>,
): Record<string, JsonSchema | undefined> {
  const names = FORMAT_SCHEMA_NAMES[format];
  const formatSchemas = errorSchemas(format, codes);
  // The 422 body names the format's other schemas (its items) by $ref.
  if (used.has(names.validation)) {
    for (const name of Object.keys(formatSchemas))
      if (name !== names.error && name !== names.codedError) used.add(name);
  }
  return Object.fromEntries(
    [...used].sort().map((name) => [name, formatSchemas[name] ?? known[name]]),
  );
}

/**
 * An operation's error rows, in the order a reader expects them (codes, then 4XX, then default:
 * JSON writes integer-like keys first, in ascending order, and the others in the order they are
 * added), each error shown under the row a client reads its status under.
 */
function errorRows(
  route: Route,
  format: ErrorFormat,
  keysRequired: boolean,
  stages: readonly Stage[],
  limitHeaders: Record<string, unknown> | undefined,
): Map<string, Row> {
  const rows = new Map<string, Row>();
  const declare = (key: string, row: Row): void => {
    if (rows.has(key))
      throw new Error(`${route.method} ${route.path} documents two answers with status ${key}`);
    rows.set(key, row);
  };
  for (const declared of route.docs.responses ?? []) {
    const shown = show(declared.error, format);
    declare(String(shown.status), ownRow(declared, shown));
  }
  if (route.params.length > 0 || route.body !== undefined) {
    const { invalid, reachable } = typicalInvalidRequest(route);
    const description = reachable
      ? 'Validation Error'
      : "Validation Error: listed as FastAPI lists it for an operation with input, never answered (every value of this operation's inputs is valid)";
    declare('422', { description, shown: [show(invalid, format)], own: 1, namesOthers: true });
  }
  if (limitHeaders !== undefined) {
    declare('429', {
      description: RATE_LIMITED_DESCRIPTION,
      headers: { ...RETRY_AFTER_429_DOC, ...limitHeaders },
      shown: [show(RATE_LIMITED_EXAMPLE, format)],
      own: 1,
      namesOthers: true,
    });
  }
  if (route.idempotent)
    rows.set('4XX', {
      description: KEY_ANSWERS_DESCRIPTION,
      headers: RETRY_AFTER_HEADER_DOC,
      shown: [],
      own: 0,
      namesOthers: false,
    });
  rows.set('default', {
    description: otherErrorsDescription(format),
    shown: [],
    own: 0,
    namesOthers: false,
  });
  for (const error of otherErrorsOf(route, keysRequired, stages)) {
    const shown = show(error, format);
    const row =
      rows.get(String(shown.status)) ??
      rows.get(`${String(shown.status).charAt(0)}XX`) ??
      rows.get('default');
    // A response its row already shows (/crash's 500 is the unhandled failure) is shown once.
    if (row !== undefined && !row.shown.some((other) => other.code === shown.code))
      row.shown.push(shown);
  }
  return rows;
}

export function buildOpenApi(options: OpenApiOptions): Record<string, unknown> {
  return describeApi(options).openapi;
}

function ownRow(declared: DocumentedError, shown: Shown): Row {
  const headers =
    declared.headers === undefined
      ? undefined
      : Object.fromEntries(
          Object.entries(declared.headers).map(([name, description]) => [
            name,
            { description, required: true, schema: { type: 'string' } },
          ]),
        );
  return { description: declared.description, headers, shown: [shown], own: 1, namesOthers: true };
}

/**
 * A row's content: per media type, the schema its responses follow (one, or the alternatives most
 * specific first) and each response as a named example.
 */
function contentOf(
  shown: readonly Shown[],
  names: FormatSchemaNames,
): { content: Record<string, unknown>; schemas: string[] } {
  const content: Record<string, unknown> = {};
  const schemas: string[] = [];
  for (const mediaType of new Set(shown.map((example) => example.mediaType))) {
    const ofType = shown.filter((example) => example.mediaType === mediaType);
    const examples = Object.fromEntries(
      ofType.map((example) => [
        example.code,
        { summary: `${example.status} ${example.label}`, value: example.value },
      ]),
    );
    if (mediaType === PLAIN_TEXT) {
      content[mediaType] = { schema: PLAIN_TEXT_500_SCHEMA, examples };
      continue;
    }
    const kinds = new Set(ofType.map((example) => example.kind));
    const alternatives = names.mostSpecificFirst.filter((name) =>
      [...kinds].some((kind) => kind !== 'plain' && names[kind] === name),
    );
    schemas.push(...alternatives);
    const schema =
      alternatives.length === 1
        ? schemaRef(alternatives[0] as string)
        : { anyOf: alternatives.map(schemaRef) };
    content[mediaType] = { schema, examples };
  }
  return { content, schemas };
}

function otherErrorsDescription(format: ErrorFormat): string {
  return format.name === 'problem'
    ? 'Any other error, as a problem (problem types at /docs/problems)'
    : 'Any other error, in the active error format';
}

/** The info text: which error format this document describes, and the codes of our own its responses carry. */
function describeErrors(format: ErrorFormat, codes: readonly ErrorCode[]): string {
  const own = codes.filter((code) => ERROR_CATALOGUE[code].own);
  const listed = (pick: (code: ErrorCode) => boolean): string[] =>
    own.filter(pick).map((code) => {
      const entry = ERROR_CATALOGUE[code];
      return `- \`${code}\` (${entry.status}): ${entry.title}. ${entry.about ?? ''}`.trimEnd();
    });
  switch (format.name) {
    case 'default': {
      const coded = listed((code) => ERROR_CATALOGUE[code].inDefault === 'coded');
      const head =
        'Errors are FastAPI\'s: `{"detail": …}`; an unhandled failure is a plain-text 500.';
      return coded.length === 0
        ? head
        : [
            head,
            '',
            'A `detail` of our own is an object `{"code", "message"}` with one of these codes:',
            '',
            ...coded,
          ].join('\n');
    }
    case 'unified':
      return [
        `Errors are \`{"error": {"code", "message"}}\`, with a code of the error catalogue; an unhandled failure is ${
          format.catchAll ? 'the INTERNAL envelope' : 'a plain-text 500'
        }.`,
        '',
        'An error that says no more than its status has the code `HTTP_<status>`; these codes are our own:',
        '',
        ...listed(() => true),
      ].join('\n');
    case 'problem':
      return [
        'Errors are RFC 9457 problem details (`application/problem+json`) with the wire code as the `code` member.',
        "An error that says no more than its status has the type `about:blank`; this service's own problem types are explained at [/docs/problems](/docs/problems):",
        '',
        ...own.map((code) => {
          const entry = ERROR_CATALOGUE[code];
          return `- \`${problemType(code)}\`: ${entry.title} (${entry.status}, code \`${code}\`)`;
        }),
      ].join('\n');
  }
}

/** read_todo_v2 → Read Todo V2, as FastAPI makes a summary from a function name. */
function titleCase(name: string): string {
  return name
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ');
}

/** read_todo_v2 → readTodoV2: the short, stable operationId a generated client names its call by. */
function camelCase(name: string): string {
  return name.replace(/_(\w)/g, (_, letter: string) => letter.toUpperCase());
}
