// The OpenAPI 3.1 document, drawn from the route declarations and the active error format. Rule:
// every answer a documented operation can give is described by the document and validates against
// it (test/http/openapi-answers.test.ts replays the conformance cases to prove it).
import { catalogueEntries, problemType } from './catalogue.js';
import { ERROR_SCHEMAS, schemaRef } from './error-schemas.js';
import { idempotencyKeyParameter, keyAnswersResponse, REPLAYED_HEADER_DOC, REUSED_KEY_DESCRIPTION } from './idempotency-docs.js';
import type { ErrorFormat } from './render.js';
import type { DocumentedResponse, Route } from './route.js';
import type { JsonSchema } from './schema.js';

export interface OpenApiOptions {
  readonly title: string;
  readonly version: string;
  readonly routes: readonly Route[];
  /** Schemas the routes name as their response models. */
  readonly components: Readonly<Record<string, JsonSchema>>;
  readonly errorFormat: ErrorFormat;
  /** Idempotent operations refuse a request without an Idempotency-Key. */
  readonly idempotencyKeyRequired?: boolean;
}

const LICENSE = { name: 'MIT', identifier: 'MIT' };
const jsonContent = (schema: JsonSchema): JsonSchema => ({ 'application/json': { schema } });

/** The plain-text 500 of an unhandled failure, when no catch-all renders it as JSON. */
const PLAIN_TEXT_500 = { 'text/plain': { schema: { type: 'string', const: 'Internal Server Error' } } };

/**
 * FastAPI's rules (the success code, any declared extra response, and 422 where the operation takes
 * input), except that an operation that never succeeds lists no success (D10), and each error is
 * drawn as the active format really renders it. Beyond the three-digit codes (the contract fixes
 * those), a `2XX` range describes another success an operation gives (PUT's 201), and `default`
 * every other error (an unknown to-do's 404, a 409, a 503 while the database is away).
 */
export function buildOpenApi(options: OpenApiOptions): Record<string, unknown> {
  const format = options.errorFormat;
  const errors = ERROR_SCHEMAS[format.name];
  const used: Record<string, JsonSchema> = {};
  const paths: Record<string, Record<string, unknown>> = {};
  const errorContent = (name: string): JsonSchema => {
    used[name] = errors.schemas[name] as JsonSchema;
    return { [errors.mediaType]: { schema: schemaRef(name) } };
  };
  // Problem details answer every failure as a problem; the unified format only with its catch-all.
  const failureIsJson = format.name === 'problem' || format.catchAll;
  const internalContent = (): JsonSchema => (failureIsJson ? errorContent(errors.error) : PLAIN_TEXT_500);
  const component = (name: string): JsonSchema => {
    const schema = options.components[name];
    if (schema === undefined) throw new Error(`no component schema named ${name}`);
    used[name] = schema;
    return schemaRef(name);
  };

  /** The status and body of a documented response in the active format. */
  const documented = (status: number, extra: DocumentedResponse): [number, Record<string, unknown>] => {
    const headers =
      extra.headers === undefined
        ? {}
        : {
            headers: Object.fromEntries(
              Object.entries(extra.headers).map(([name, description]) => [name, { description, required: true, schema: { type: 'string' } }]),
            ),
          };
    const answer = (code: number, content: JsonSchema): [number, Record<string, unknown>] => [
      code,
      { description: extra.description, ...headers, content },
    ];
    switch (extra.model) {
      case 'error':
        return answer(status, errorContent(errors.error));
      case 'coded-error':
        return answer(status, errorContent(errors.codedError));
      case 'internal':
        return answer(500, internalContent());
      case 'business':
        return format.name === 'default' ? answer(500, internalContent()) : answer(status, errorContent(errors.error));
      default:
        return answer(status, jsonContent(component(extra.model)));
    }
  };

  /** Any other error: in the active format, or the plain-text 500 of an unhandled failure. */
  const otherErrors = (): Record<string, unknown> => ({
    description: 'Any other error, in the active error format (see /docs/problems)',
    content: failureIsJson ? errorContent(errors.error) : { ...errorContent(errors.error), ...PLAIN_TEXT_500 },
  });

  for (const route of options.routes) {
    if (route.docs.hidden === true) continue;
    const operation: Record<string, unknown> = { summary: titleCase(route.docs.name), operationId: camelCase(route.docs.name) };
    const parameters: Record<string, unknown>[] = route.params.map(([name, spec]) => ({ name, in: 'path', required: true, schema: spec.jsonSchema }));
    if (route.idempotent) parameters.push(idempotencyKeyParameter(options.idempotencyKeyRequired === true));
    if (parameters.length > 0) operation.parameters = parameters;
    if (route.body !== undefined) {
      used[route.body.name] = route.body.jsonSchema;
      operation.requestBody = { content: jsonContent(schemaRef(route.body.name)), required: true };
    }
    const responses: Record<string, unknown> = {};
    const model = route.docs.responseModel;
    const success = (description: string): Record<string, unknown> =>
      route.status === 204 ? { description } : { description, content: jsonContent(model === undefined ? {} : component(model)) };
    if (route.docs.succeeds !== false) {
      responses[String(route.status)] = route.idempotent
        ? { ...success('Successful Response'), headers: REPLAYED_HEADER_DOC }
        : success('Successful Response');
    }
    if (route.docs.otherSuccess !== undefined) responses['2XX'] = success(route.docs.otherSuccess);
    for (const [status, extra] of Object.entries(route.docs.responses ?? {})) {
      const [code, response] = documented(Number(status), extra);
      responses[String(code)] = response;
    }
    if (route.params.length > 0 || route.body !== undefined) {
      responses['422'] = { description: 'Validation Error', content: errorContent(errors.validation) };
    }
    if (route.idempotent) {
      // Marks the schemas used; the bodies below name them by $ref.
      errorContent(errors.validation);
      errorContent(errors.error);
      errorContent(errors.codedError);
      const oneOf = (names: readonly string[]): JsonSchema => ({
        [errors.mediaType]: { schema: { anyOf: [...new Set(names)].map(schemaRef) } },
      });
      responses['422'] = { description: REUSED_KEY_DESCRIPTION, content: oneOf([errors.validation, errors.codedError]) };
      // The range also covers the operation's other 4xx (a body that cannot be parsed, 413), as `default` did.
      responses['4XX'] = keyAnswersResponse(oneOf([errors.error, errors.codedError]));
    }
    responses.default = otherErrors();
    // Listed as a reader expects them (three-digit codes, 2XX, 4XX, default) with no sort: JSON
    // writes integer-like keys first, in ascending order, and the ranges above are added in order.
    operation.responses = responses;
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation;
  }

  // The 422 body names the format's other schemas (its items) by $ref.
  if (errors.validation in used) {
    for (const [name, schema] of Object.entries(errors.schemas)) {
      if (name !== errors.error && name !== errors.codedError) used[name] = schema;
    }
  }
  const schemas = Object.fromEntries(Object.entries(used).sort(([a], [b]) => (a < b ? -1 : 1)));
  return {
    openapi: '3.1.0',
    info: { title: options.title, version: options.version, description: describeErrors(format), license: LICENSE },
    // The document is served by the service it describes: its server is the origin it came from.
    servers: [{ url: '/' }],
    // No operation takes credentials (the contract's Authentication section); said, not left out.
    security: [],
    paths,
    components: { schemas },
  };
}

/** The info text: which error format this document describes, and where problem types are explained. */
function describeErrors(format: ErrorFormat): string {
  switch (format.name) {
    case 'default':
      return 'Errors are FastAPI\'s: `{"detail": …}`; an unhandled failure is a plain-text 500.';
    case 'unified':
      return `Errors are \`{"error": {"code", "message"}}\`, with a code of the error catalogue; an unhandled failure is ${
        format.catchAll ? 'the INTERNAL envelope' : 'a plain-text 500'
      }.`;
    case 'problem': {
      const own = catalogueEntries()
        .filter(([, entry]) => entry.own)
        .map(([code, entry]) => `- \`${problemType(code)}\`: ${entry.title} (${entry.status}, code \`${code}\`)`);
      return [
        'Errors are RFC 9457 problem details (`application/problem+json`) with the wire code as the `code` member.',
        'An error that says no more than its status has the type `about:blank`; the services\' own problem types are explained at [/docs/problems](/docs/problems):',
        '',
        ...own,
      ].join('\n');
    }
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
