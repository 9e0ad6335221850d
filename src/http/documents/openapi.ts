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
import { ApiError, InvalidRequest } from '../errors.js';
import {
  carriedHeaders,
  conditionParameters,
  HeaderBook,
  SHARED_COMPONENTS,
  stageRequestHeaders,
  withStageHeaders,
} from './operation-docs.js';
import type { RowDoc, Stage } from '../stages/stage.js';
import { ETAG_HEADER_DOCS, NOT_MODIFIED_DESCRIPTION } from './conditions.js';
import { JsonObject } from '../json/json-value.js';
import { MESSAGES } from '../validation/lax.js';
import { renderError, type ErrorFormat } from '../render.js';
import type { DocumentedError, Route } from '../route.js';
import type { Issues, JsonSchema } from '../validation/schema.js';

export interface OpenApiOptions {
  readonly title: string;
  readonly version: string;
  readonly routes: readonly Route[];
  /** Schemas the routes name as their response models. */
  readonly components: Readonly<Record<string, JsonSchema>>;
  readonly errorFormat: ErrorFormat;
  /**
   * The pipeline's stages (stage.ts), the route's own among them: all the document knows of what
   * stands between a request and its route. Each declares the errors it may answer on an
   * operation, its rows, the headers it adds to its responses, the request headers it reads, its
   * marks on an operation and the operations it answers itself (operation-docs.ts applies them).
   */
  readonly stages: readonly Stage[];
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

/** The errors an operation answers beside its declared rows and its typical 422: its own, then the stages'. */
function otherErrorsOf(route: Route, stages: readonly Stage[]): Error[] {
  return [
    ...(route.docs.otherErrors ?? []),
    ...stages.flatMap((stage) => stage.docs?.errors?.(route) ?? []),
    UNHANDLED,
  ];
}

/** What every operation of the document is drawn with. */
interface Drawing {
  readonly format: ErrorFormat;
  readonly names: FormatSchemaNames;
  readonly book: HeaderBook;
  /** The schemas the document names; `known` those it may name. */
  readonly used: Set<string>;
  readonly known: Record<string, JsonSchema>;
  /** The wire codes its responses carry. */
  readonly codes: Set<ErrorCode>;
}

/**
 * FastAPI's rules (the success code, any declared extra response, and 422 where the operation takes
 * input), except that an operation that never succeeds lists no success (D10), and each error is
 * drawn as the active format really renders it. Beyond the three-digit codes (the contract fixes
 * those), a `2XX` range describes another success an operation gives (PUT's 201), a stage's range
 * (the Idempotency-Key's `4XX`) the client errors it adds, and `default` every other error (an
 * unknown to-do's 404, a 409, a 503 while the database is away, an unhandled failure).
 *
 * Each error the operation answers is rendered once and shown as an example of the row a client
 * reads its status under (the exact code, else its range, else `default`); a row's schema is the
 * union of its examples' schemas, and the code, problem-type and status enums of the error schemas
 * are the codes the examples carry. So the document shows and allows exactly what the service
 * answers. What stands between a request and its route is drawn from the stages alone.
 */
export function describeApi(options: OpenApiOptions): ApiDescription {
  const format = options.errorFormat;
  const { stages } = options;
  const drawing: Drawing = {
    format,
    names: FORMAT_SCHEMA_NAMES[format.name],
    book: new HeaderBook(stages),
    used: new Set<string>(),
    known: { ...options.components },
    codes: new Set<ErrorCode>(),
  };
  // An operation a stage answers before routing is seen by the stages that stand there only.
  const beforeRouting = stages.filter((stage) => stage.place === 'request');
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [path, routes] of documentedPaths(options.routes)) {
    const operations: Record<string, unknown> = {};
    const answered = stages.flatMap((stage) => stage.docs?.operations?.(path, routes) ?? []);
    for (const route of [...routes, ...answered]) {
      const seen = route.docs.answeredBeforeRouting === true ? beforeRouting : stages;
      operations[route.method.toLowerCase()] = operationOf(route, seen, drawing);
    }
    paths[path] = operations;
  }
  const carried = catalogueEntries()
    .map(([code]) => code)
    .filter((code) => drawing.codes.has(code));
  const schemas = componentSchemas(format.name, drawing.codes, drawing.used, drawing.known);
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

/** The documented routes by path, the paths in the order of their first route. */
function documentedPaths(routes: readonly Route[]): Map<string, Route[]> {
  const byPath = new Map<string, Route[]>();
  for (const route of routes) {
    if (route.docs.hidden === true) continue;
    const onPath = byPath.get(route.path);
    if (onPath === undefined) byPath.set(route.path, [route]);
    else onPath.push(route);
  }
  return byPath;
}

/** One operation: its names, its parameters, its body, its rows, and the stages' marks on it. */
function operationOf(
  route: Route,
  stages: readonly Stage[],
  drawing: Drawing,
): Record<string, unknown> {
  const name = route.docs.name;
  const operation: Record<string, unknown> = {
    summary: route.docs.summary ?? titleCase(name),
    operationId: camelCase(name),
  };
  if (route.docs.description !== undefined) operation.description = route.docs.description;
  for (const stage of stages) Object.assign(operation, stage.docs?.operation?.(route));
  const parameters: Record<string, unknown>[] = [
    ...route.params.map(([param, spec]) => ({
      name: param,
      in: 'path',
      required: true,
      schema: spec.jsonSchema,
    })),
    ...conditionParameters(route),
    ...stageRequestHeaders(route, stages),
  ];
  operation.parameters = parameters;
  if (route.body !== undefined) {
    drawing.used.add(route.body.name);
    drawing.known[route.body.name] = route.body.jsonSchema;
    operation.requestBody = {
      content: { [JSON_MEDIA_TYPE]: { schema: schemaRef(route.body.name) } },
      required: true,
    };
  }
  const responses = successRows(route, drawing);
  for (const [key, row] of errorRows(route, stages, drawing.format))
    if (row.shown.length > 0) responses[key] = rowObject(row, drawing);
  operation.responses = withStageHeaders(route, responses, stages, drawing.book);
  return operation;
}

/** An error row as the document shows it: its description, its headers, its content. */
function rowObject(row: Row, drawing: Drawing): Record<string, unknown> {
  for (const shown of row.shown) if (shown.mediaType !== PLAIN_TEXT) drawing.codes.add(shown.code);
  const content = contentOf(row.shown, drawing.names);
  for (const name of content.schemas) drawing.used.add(name);
  const others = row.namesOthers ? row.shown.slice(row.own).map((shown) => shown.label) : [];
  const description =
    others.length === 0
      ? row.description
      : `${row.description}. Also under this status: ${others.join('; ')}.`;
  const headers = { ...row.headers, ...carriedHeaders(row.shown, row.headers, drawing.book) };
  return {
    description,
    ...(Object.keys(headers).length === 0 ? {} : { headers }),
    content: content.content,
  };
}

/** The success rows: the declared status, another success as 2XX, a tagged read's 304 as 3XX. */
function successRows(route: Route, drawing: Drawing): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  const etag = route.docs.tagged === undefined ? undefined : etagHeader(drawing.book);
  const success = (description: string): Record<string, unknown> => {
    const row: Record<string, unknown> = { description };
    if (route.status !== 204) row.content = successContent(route, description, drawing);
    if (etag !== undefined) row.headers = etag;
    return row;
  };
  if (route.docs.succeeds !== false)
    responses[String(route.status)] = success(
      route.docs.successDescription ?? 'Successful Response',
    );
  if (route.docs.otherSuccess !== undefined) responses['2XX'] = success(route.docs.otherSuccess);
  if (route.docs.tagged === 'read')
    responses['3XX'] = { description: NOT_MODIFIED_DESCRIPTION, headers: etag };
  return responses;
}

/** A success's body: its model's schema, and its example. */
function successContent(
  route: Route,
  description: string,
  drawing: Drawing,
): Record<string, unknown> {
  const model = route.docs.responseModel;
  const example = route.docs.example;
  if (example === undefined)
    throw new Error(`${route.method} ${route.path} documents a success body without an example`);
  if (model !== undefined) {
    if (drawing.known[model] === undefined) throw new Error(`no component schema named ${model}`);
    drawing.used.add(model);
  }
  return {
    [JSON_MEDIA_TYPE]: {
      schema: model === undefined ? {} : schemaRef(model),
      examples: {
        [model ?? 'body']: { summary: description, value: JSON.parse(example) as unknown },
      },
    },
  };
}

function etagHeader(book: HeaderBook): Record<string, unknown> {
  return Object.fromEntries(
    Object.keys(ETAG_HEADER_DOCS).map((name) => [name, book.header(name, false)]),
  );
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
 * An operation's error rows, in the order a reader expects them (codes, then ranges, then default:
 * JSON writes integer-like keys first, in ascending order, and the others in the order they are
 * added), each error shown under the row a client reads its status under.
 */
function errorRows(route: Route, stages: readonly Stage[], format: ErrorFormat): Map<string, Row> {
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
  if (
    route.docs.answeredBeforeRouting !== true &&
    (route.params.length > 0 || route.body !== undefined)
  ) {
    const { invalid, reachable } = typicalInvalidRequest(route);
    const description = reachable
      ? 'Validation Error'
      : "Validation Error: listed as FastAPI lists it for an operation with input, never answered (every value of this operation's inputs is valid)";
    declare('422', { description, shown: [show(invalid, format)], own: 1, namesOthers: true });
  }
  for (const stageRow of stages.flatMap((stage) => stage.docs?.rows?.(route) ?? []))
    declare(stageRow.key, stageRowOf(stageRow, format));
  rows.set('default', {
    description: otherErrorsDescription(format),
    shown: [],
    own: 0,
    namesOthers: false,
  });
  for (const error of otherErrorsOf(route, stages)) {
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

/** A stage's row: its own response first, if it has one; a three-digit row names the others it shows. */
function stageRowOf(row: RowDoc, format: ErrorFormat): Row {
  const shown = row.error === undefined ? [] : [show(row.error, format)];
  return {
    description: row.description,
    shown,
    own: shown.length,
    namesOthers: /^\d{3}$/.test(row.key),
  };
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
