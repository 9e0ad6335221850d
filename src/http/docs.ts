// The documentation: an OpenAPI 3.1 document drawn from the route declarations, Swagger UI at
// /docs and ReDoc at /redoc. Their scripts are served from our own installed packages, so the
// pages work on a machine without network access.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { catalogueEntries, problemType } from './catalogue.js';
import { JSON_TYPE, PROBLEM_JSON_TYPE, type ErrorFormat, type ErrorFormatName } from './render.js';
import { defineRoute, type DocumentedResponse, type Reply, type Route } from './route.js';
import type { JsonSchema } from './schema.js';

const HTML = 'text/html; charset=utf-8';

export interface DocsOptions {
  readonly title: string;
  readonly version: string;
  readonly routes: readonly Route[];
  /** Schemas the routes name as their response models. */
  readonly components: Readonly<Record<string, JsonSchema>>;
  readonly errorFormat: ErrorFormat;
}

// ---------------------------------------------------------------- the OpenAPI document

const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const jsonContent = (schema: JsonSchema): JsonSchema => ({ 'application/json': { schema } });

/** RFC 9457's members, and our wire code as the extension member `code`. */
const PROBLEM_PROPERTIES: Readonly<Record<string, JsonSchema>> = {
  type: { type: 'string', format: 'uri-reference', title: 'Type' },
  title: { type: 'string', title: 'Title' },
  status: { type: 'integer', title: 'Status' },
  detail: { type: 'string', title: 'Detail' },
  code: { type: 'string', title: 'Code' },
};
const PROBLEM_REQUIRED = ['type', 'title', 'status', 'detail', 'code'];

const CODE_AND_MESSAGE: JsonSchema = {
  properties: { code: { type: 'string', title: 'Code' }, message: { type: 'string', title: 'Message' } },
  type: 'object',
  required: ['code', 'message'],
  title: 'Error',
};

/**
 * The bodies our errors really have, in each format: the 422 body, the body of an error with a string
 * detail, and of one with a `{code, message}` detail.
 */
const ERROR_SCHEMAS: Record<
  ErrorFormatName,
  { mediaType: string; validation: string; error: string; codedError: string; schemas: Record<string, JsonSchema> }
> = {
  default: {
    mediaType: JSON_TYPE,
    validation: 'HTTPValidationError',
    error: 'Message',
    codedError: 'CodedMessage',
    schemas: {
      CodedMessage: { properties: { detail: CODE_AND_MESSAGE }, type: 'object', required: ['detail'], title: 'CodedMessage' },
      HTTPValidationError: {
        properties: { detail: { items: ref('ValidationError'), type: 'array', title: 'Detail' } },
        type: 'object',
        title: 'HTTPValidationError',
      },
      Message: { properties: { detail: { type: 'string', title: 'Detail' } }, type: 'object', required: ['detail'], title: 'Message' },
      ValidationError: {
        properties: {
          loc: { items: { anyOf: [{ type: 'string' }, { type: 'integer' }] }, type: 'array', title: 'Location' },
          msg: { type: 'string', title: 'Message' },
          type: { type: 'string', title: 'Error Type' },
          input: { title: 'Input' },
          ctx: { type: 'object', title: 'Context' },
        },
        type: 'object',
        required: ['loc', 'msg', 'type'],
        title: 'ValidationError',
      },
    },
  },
  unified: {
    mediaType: JSON_TYPE,
    validation: 'UnifiedValidationError',
    error: 'UnifiedError',
    codedError: 'UnifiedError',
    schemas: {
      UnifiedError: {
        properties: { error: CODE_AND_MESSAGE },
        type: 'object',
        required: ['error'],
        title: 'UnifiedError',
      },
      UnifiedValidationError: {
        properties: {
          error: {
            properties: {
              code: { type: 'string', const: 'VALIDATION_FAILED', title: 'Code' },
              message: { type: 'string', title: 'Message' },
              fields: {
                items: {
                  properties: { field: { type: 'string', title: 'Field' }, message: { type: 'string', title: 'Message' } },
                  type: 'object',
                  required: ['field', 'message'],
                },
                type: 'array',
                title: 'Fields',
              },
            },
            type: 'object',
            required: ['code', 'message', 'fields'],
          },
        },
        type: 'object',
        required: ['error'],
        title: 'UnifiedValidationError',
      },
    },
  },
  problem: {
    mediaType: PROBLEM_JSON_TYPE,
    validation: 'ValidationProblem',
    error: 'Problem',
    codedError: 'Problem',
    schemas: {
      Problem: { properties: PROBLEM_PROPERTIES, type: 'object', required: PROBLEM_REQUIRED, title: 'Problem' },
      ValidationProblem: {
        properties: {
          ...PROBLEM_PROPERTIES,
          errors: {
            items: {
              properties: {
                detail: { type: 'string', title: 'Detail' },
                pointer: { type: 'string', title: 'Pointer', description: 'A JSON Pointer into the body, as a URI fragment' },
                parameter: { type: 'string', title: 'Parameter', description: 'The name of the path parameter' },
                type: { type: 'string', title: 'Error Type' },
              },
              type: 'object',
              required: ['detail', 'type'],
            },
            type: 'array',
            title: 'Errors',
          },
        },
        type: 'object',
        required: [...PROBLEM_REQUIRED, 'errors'],
        title: 'ValidationProblem',
      },
    },
  },
};

/** The plain-text 500 of an unhandled failure, when no catch-all renders it as JSON. */
const PLAIN_TEXT_500 = { 'text/plain': { schema: { type: 'string', const: 'Internal Server Error' } } };

/**
 * FastAPI's rules (the success code, any declared extra response, and 422 where the operation takes
 * input), except that an operation that never succeeds lists no success (D10), and each error is
 * drawn as the active format really renders it.
 */
export function buildOpenApi(options: DocsOptions): Record<string, unknown> {
  const format = options.errorFormat;
  const errors = ERROR_SCHEMAS[format.name];
  const used: Record<string, JsonSchema> = {};
  const paths: Record<string, Record<string, unknown>> = {};
  const errorContent = (name: string): JsonSchema => {
    used[name] = errors.schemas[name] as JsonSchema;
    return { [errors.mediaType]: { schema: ref(name) } };
  };
  // Problem details answer every failure as a problem; the unified format only with its catch-all.
  const internalContent = (): JsonSchema =>
    format.name === 'problem' || format.catchAll ? errorContent(errors.error) : PLAIN_TEXT_500;

  /** The status and body of a documented response in the active format. */
  const documented = (status: number, extra: DocumentedResponse): [number, Record<string, unknown>] => {
    const headers =
      extra.headers === undefined
        ? {}
        : {
            headers: Object.fromEntries(
              Object.entries(extra.headers).map(([name, description]) => [name, { description, schema: { type: 'string' } }]),
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
        used[extra.model] = requireComponent(options, extra.model);
        return answer(status, jsonContent(ref(extra.model)));
    }
  };

  for (const route of options.routes) {
    if (route.docs.hidden === true) continue;
    const operation: Record<string, unknown> = {
      summary: titleCase(route.docs.name),
      operationId: `${route.docs.name}${route.path}`.replace(/\W/g, '_') + `_${route.method.toLowerCase()}`,
    };
    if (route.params.length > 0) {
      operation.parameters = route.params.map(([name, spec]) => ({ name, in: 'path', required: true, schema: spec.jsonSchema }));
    }
    if (route.body !== undefined) {
      used[route.body.name] = route.body.jsonSchema;
      operation.requestBody = { content: jsonContent(ref(route.body.name)), required: true };
    }
    const responses: Record<string, unknown> = {};
    const model = route.docs.responseModel;
    if (model !== undefined) used[model] = requireComponent(options, model);
    if (route.docs.succeeds !== false) {
      responses[String(route.status)] =
        route.status === 204
          ? { description: 'Successful Response' }
          : { description: 'Successful Response', content: jsonContent(model === undefined ? {} : ref(model)) };
    }
    for (const [status, extra] of Object.entries(route.docs.responses ?? {})) {
      const [code, response] = documented(Number(status), extra);
      responses[String(code)] = response;
    }
    if (route.params.length > 0 || route.body !== undefined) {
      responses['422'] = { description: 'Validation Error', content: errorContent(errors.validation) };
      for (const [name, schema] of Object.entries(errors.schemas)) {
        if (name !== errors.error && name !== errors.codedError) used[name] = schema;
      }
    }
    operation.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => (a < b ? -1 : 1)));
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation;
  }

  const schemas = Object.fromEntries(Object.entries(used).sort(([a], [b]) => (a < b ? -1 : 1)));
  return { openapi: '3.1.0', info: { title: options.title, version: options.version }, paths, components: { schemas } };
}

function requireComponent(options: DocsOptions, name: string): JsonSchema {
  const schema = options.components[name];
  if (schema === undefined) throw new Error(`no component schema named ${name}`);
  return schema;
}

/** read_todo_v2 → Read Todo V2, as FastAPI makes a summary from a function name. */
function titleCase(name: string): string {
  return name
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ');
}

// ---------------------------------------------------------------- the pages

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function swaggerPage(title: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link type="text/css" rel="stylesheet" href="/docs/swagger-ui.css">
<title>${escapeHtml(title)} - Swagger UI</title>
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script>
window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  layout: 'BaseLayout',
  deepLinking: true,
  showExtensions: true,
  showCommonExtensions: true,
  oauth2RedirectUrl: window.location.origin + '/docs/oauth2-redirect',
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
});
</script>
</body>
</html>
`;
}

function redocPage(title: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} - ReDoc</title>
<style>body { margin: 0; padding: 0; }</style>
</head>
<body>
<noscript>ReDoc requires JavaScript to function. Please enable it to browse the documentation.</noscript>
<redoc spec-url="/openapi.json"></redoc>
<script src="/redoc/redoc.standalone.js"></script>
</body>
</html>
`;
}

/** The page the stable problem type URIs point at: one section per problem of our own. */
function problemsPage(title: string): string {
  const sections = catalogueEntries()
    .filter(([, entry]) => entry.own)
    .map(([code, entry]) => {
      const type = problemType(code);
      return `<section id="${escapeHtml(type.slice(type.indexOf('#') + 1))}">
<h2>${escapeHtml(entry.title)}</h2>
<p><code>type: ${escapeHtml(type)}</code> · <code>status: ${entry.status}</code> · <code>code: ${escapeHtml(code)}</code></p>
<p>${escapeHtml(entry.about ?? '')}</p>
<p>Detail: <code>${escapeHtml(entry.message)}</code></p>
</section>`;
    })
    .join('\n');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<link rel="icon" href="data:,">
<title>${escapeHtml(title)} - problem types</title>
</head>
<body>
<h1>Problem types</h1>
<p>With <code>--errors problem</code>, every error is an RFC 9457 problem (<code>application/problem+json</code>).
Errors that say no more than their HTTP status have the type <code>about:blank</code>; these are the services' own:</p>
${sections}
</body>
</html>
`;
}

// ---------------------------------------------------------------- the routes

const require = createRequire(import.meta.url);
const packageDir = (name: string): string => dirname(require.resolve(`${name}/package.json`));

/** A file of an installed package, read on first use and kept; a failed read is tried again next time. */
function packageFile(pkg: string, file: string, contentType: string): () => Promise<Reply> {
  let cached: Promise<Reply> | undefined;
  return () =>
    (cached ??= readFile(join(packageDir(pkg), file)).then(
      (body) => ({ status: 200, body, contentType }),
      (error: unknown) => {
        cached = undefined;
        throw error;
      },
    ));
}

function staticRoute(path: string, reply: () => Reply | Promise<Reply>): Route {
  return defineRoute({ method: 'GET', path, status: 200, params: {}, docs: { name: path, hidden: true }, handle: reply });
}

export function docsRoutes(options: DocsOptions): Route[] {
  const openapi = JSON.stringify(buildOpenApi(options));
  const docs = swaggerPage(options.title);
  const redoc = redocPage(options.title);
  const problems = problemsPage(options.title);
  return [
    staticRoute('/openapi.json', () => ({ status: 200, body: openapi })),
    staticRoute('/docs', () => ({ status: 200, body: docs, contentType: HTML })),
    staticRoute('/docs/problems', () => ({ status: 200, body: problems, contentType: HTML })),
    staticRoute('/docs/oauth2-redirect', packageFile('swagger-ui-dist', 'oauth2-redirect.html', HTML)),
    staticRoute('/docs/oauth2-redirect.js', packageFile('swagger-ui-dist', 'oauth2-redirect.js', 'text/javascript; charset=utf-8')),
    staticRoute('/docs/swagger-ui.css', packageFile('swagger-ui-dist', 'swagger-ui.css', 'text/css; charset=utf-8')),
    staticRoute('/docs/swagger-ui-bundle.js', packageFile('swagger-ui-dist', 'swagger-ui-bundle.js', 'text/javascript; charset=utf-8')),
    staticRoute('/redoc', () => ({ status: 200, body: redoc, contentType: HTML })),
    staticRoute('/redoc/redoc.standalone.js', packageFile('redoc', 'bundles/redoc.standalone.js', 'text/javascript; charset=utf-8')),
  ];
}
