// The rules buildOpenApi draws an operation by, on routes made for the purpose (the services' own
// documents are pinned whole by published-documents.test.ts): what FastAPI lists for an operation,
// and what the route declarations can ask for.
import { pipelineStages } from '../../src/http/stages/pipeline-stages.js';
import { BODY_LIMITS } from '../../src/server.js';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiError } from '../../src/http/errors.js';
import { buildOpenApi } from '../../src/http/documents/openapi.js';
import type { ErrorFormatName } from '../../src/http/render.js';
import { defineRoute, jsonReply, type Route, type RouteDocs } from '../../src/http/route.js';
import {
  intParam,
  model,
  strField,
  strParam,
  type JsonSchema,
  type ParamSpec,
} from '../../src/http/validation/schema.js';

const id = intParam({ title: 'Id', ge: 0, le: 100 });
const name = strParam('Name');
const ok = () => jsonReply(200, '{}');

const Note = model('Note', { text: strField('Text') });

/** A route whose success body is documented by the example `{}` unless its docs say otherwise. */
function route(
  path: string,
  docs: RouteDocs,
  options: {
    status?: number;
    params?: Record<string, ParamSpec<unknown>>;
    body?: typeof Note;
  } = {},
): Route {
  return defineRoute({
    method: 'GET',
    path,
    status: options.status ?? 200,
    params: options.params ?? {},
    body: options.body,
    docs: { example: '{}', ...docs },
    handle: ok,
  });
}

interface MediaType {
  readonly schema: unknown;
  readonly examples?: Record<string, { readonly summary: string; readonly value: unknown }>;
}
interface Operation {
  readonly responses: Record<
    string,
    { readonly description: string; readonly content?: Record<string, MediaType> }
  >;
}
type Paths = Record<string, Record<string, Operation>>;

function documentOf(
  routes: readonly Route[],
  components: Record<string, JsonSchema> = {},
  format: ErrorFormatName = 'default',
): { paths: Paths; components: { schemas: Record<string, unknown> } } {
  return buildOpenApi({
    title: 't',
    version: '1',
    routes,
    components,
    errorFormat: { name: format, catchAll: false },
    // The route's own stages only: what the input stage answers (a body's 400 and 413).
    stages: pipelineStages({
      routes,
      errorFormat: { name: format, catchAll: false },
      limits: BODY_LIMITS,
      stages: [],
    }).stages,
  }) as {
    paths: Paths;
    components: { schemas: Record<string, unknown> };
  };
}

/** The names of a row's examples, per media type. */
const exampleNames = (operation: Operation | undefined, row: string): Record<string, string[]> =>
  Object.fromEntries(
    Object.entries(operation?.responses[row]?.content ?? {}).map(([type, media]) => [
      type,
      Object.keys(media.examples ?? {}),
    ]),
  );

const paths = (routes: readonly Route[], components: Record<string, JsonSchema> = {}): Paths =>
  documentOf(routes, components).paths;

describe('how an operation is documented', () => {
  test('a route marked hidden is left out of the document; the others are in it', () => {
    const documented = paths([
      route('/shown', { name: 'shown' }),
      route('/internal', { name: 'internal', hidden: true }),
    ]);
    assert.deepEqual(Object.keys(documented), ['/shown']);
  });

  test('an operation that takes a path parameter lists the 422 Validation Error; one that takes no input does not', () => {
    const documented = paths([
      route('/items/{item}', { name: 'item' }, { params: { item: id } }),
      route('/items', { name: 'items' }),
    ]);
    assert.deepEqual(Object.keys(documented['/items/{item}']?.get?.responses ?? {}), [
      '200',
      '422',
      'default',
    ]);
    assert.equal(
      documented['/items/{item}']?.get?.responses['422']?.description,
      'Validation Error',
    );
    assert.deepEqual(Object.keys(documented['/items']?.get?.responses ?? {}), ['200', 'default']);
  });

  test('an operation that takes a body lists the 422 Validation Error too', () => {
    const documented = paths([route('/notes', { name: 'notes' }, { body: Note })]);
    assert.deepEqual(Object.keys(documented['/notes']?.get?.responses ?? {}), [
      '200',
      '422',
      'default',
    ]);
  });

  test('the components are the schemas the answers shown use: no validation schemas without input, no coded error unless one is answered', () => {
    // Without input, the only other answer is an unhandled failure: the default format's plain 500.
    assert.deepEqual(
      Object.keys(documentOf([route('/items', { name: 'items' })]).components.schemas),
      [],
    );
    assert.deepEqual(
      Object.keys(
        documentOf([route('/items/{item}', { name: 'item' }, { params: { item: id } })]).components
          .schemas,
      ),
      ['HTTPValidationError', 'ValidationError'],
    );
    const coded = route('/limits', {
      name: 'limits',
      responses: [{ description: 'Hidden', error: new ApiError('LIMITS_HIDDEN') }],
    });
    assert.deepEqual(Object.keys(documentOf([coded]).components.schemas), ['CodedMessage']);
  });

  test('a declared error is documented under the status the active format renders it with, its rendering as the example', () => {
    const withdraw = route('/w', {
      name: 'w',
      responses: [
        {
          description: 'Too little',
          error: new ApiError('NOT_ENOUGH_MONEY', { message: 'Balance is 5, you asked for 10' }),
        },
      ],
    });
    const unified = documentOf([withdraw], {}, 'unified').paths['/w']?.get?.responses['400'];
    assert.equal(unified?.description, 'Too little');
    assert.deepEqual(unified?.content?.['application/json']?.examples?.NOT_ENOUGH_MONEY?.value, {
      error: { code: 'NOT_ENOUGH_MONEY', message: 'Balance is 5, you asked for 10' },
    });
    // The default format does not recognise it: the reference's unhandled 500, in plain text.
    const plain = documentOf([withdraw]).paths['/w']?.get?.responses;
    assert.equal(plain?.['400'], undefined);
    assert.deepEqual(
      plain?.['500']?.content?.['text/plain']?.examples?.NOT_ENOUGH_MONEY?.value,
      'Internal Server Error',
    );
  });

  test('another error is shown under the row a client reads its status under: its code, else its range, else default', () => {
    const documented = paths([
      route('/x', {
        name: 'x',
        responses: [
          { description: 'No such x', error: new ApiError('HTTP_404', { message: 'X not found' }) },
        ],
        otherErrors: [
          new ApiError('HTTP_404', { message: 'Y not found' }),
          new ApiError('HTTP_409', { message: 'X is busy' }),
        ],
      }),
    ]);
    const responses = documented['/x']?.get?.responses;
    // The second 404 has the row's status and code already: shown once, under the declared row.
    assert.deepEqual(exampleNames(documented['/x']?.get, '404'), {
      'application/json': ['HTTP_404'],
    });
    assert.equal(responses?.['404']?.description, 'No such x');
    assert.deepEqual(exampleNames(documented['/x']?.get, 'default'), {
      'application/json': ['HTTP_409'],
      'text/plain': ['INTERNAL'],
    });
  });

  test("a row's description names the answers placed in it beside its own", () => {
    const documented = paths([
      route('/x', {
        name: 'x',
        responses: [{ description: 'Bad body', error: new ApiError('HTTP_400') }],
        otherErrors: [new ApiError('IDEMPOTENCY_KEY_INVALID')],
      }),
    ]);
    assert.equal(
      documented['/x']?.get?.responses['400']?.description,
      'Bad body. Also under this status: Invalid Idempotency-Key.',
    );
    // Two schemas in one row: the more specific first, so that a client trying them in order reads
    // each right.
    assert.deepEqual(
      documented['/x']?.get?.responses['400']?.content?.['application/json']?.schema,
      {
        anyOf: [
          { $ref: '#/components/schemas/CodedMessage' },
          { $ref: '#/components/schemas/Message' },
        ],
      },
    );
  });

  test('an operation whose inputs cannot fail still lists 422, as FastAPI does, and says it is never answered', () => {
    const documented = paths([route('/people/{name}', { name: 'person' }, { params: { name } })]);
    const row = documented['/people/{name}']?.get?.responses['422'];
    assert.match(row?.description ?? '', /never answered/);
    assert.deepEqual(row?.content?.['application/json']?.examples?.VALIDATION_FAILED?.value, {
      detail: [{ type: 'missing', loc: ['path', 'name'], msg: 'Field required', input: null }],
    });
  });

  test("the 422 shows the operation's own typical failure: a body without its required fields, else a path parameter that is not an integer", () => {
    const documented = paths([
      route('/notes/{item}', { name: 'note' }, { params: { item: id }, body: Note }),
      route('/items/{item}', { name: 'item' }, { params: { item: id } }),
    ]);
    const example = (path: string): unknown =>
      documented[path]?.get?.responses['422']?.content?.['application/json']?.examples
        ?.VALIDATION_FAILED?.value;
    assert.deepEqual(example('/notes/{item}'), {
      detail: [{ type: 'missing', loc: ['body', 'text'], msg: 'Field required', input: {} }],
    });
    assert.deepEqual(example('/items/{item}'), {
      detail: [
        {
          type: 'int_parsing',
          loc: ['path', 'item'],
          msg: 'Input should be a valid integer, unable to parse string as an integer',
          input: 'abc',
        },
      ],
    });
  });

  test('a 204 success is documented without a body; another success with its JSON body and its example', () => {
    const documented = paths([
      route('/gone', { name: 'gone' }, { status: 204 }),
      route('/here', { name: 'here', example: '{"a":1}' }),
    ]);
    assert.deepEqual(documented['/gone']?.get?.responses['204'], {
      description: 'Successful Response',
      headers: { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } },
    });
    assert.deepEqual(documented['/here']?.get?.responses['200'], {
      description: 'Successful Response',
      content: {
        'application/json': {
          schema: {},
          examples: { body: { summary: 'Successful Response', value: { a: 1 } } },
        },
      },
      headers: { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } },
    });
  });

  test('a success body without an example stops the build, naming the operation', () => {
    assert.throws(
      () =>
        paths([
          defineRoute({
            method: 'GET',
            path: '/bare',
            status: 200,
            params: {},
            docs: { name: 'bare' },
            handle: ok,
          }),
        ]),
      {
        message: 'GET /bare documents a success body without an example',
      },
    );
  });

  test('codes come first in ascending order, then 2XX and default, whatever order the route declares them in', () => {
    const documented = paths([
      route(
        '/x',
        {
          name: 'x',
          otherSuccess: 'Created',
          responses: [
            { description: 'Not Found', error: new ApiError('HTTP_404') },
            { description: 'Bad', error: new ApiError('HTTP_400') },
          ],
        },
        { params: {} },
      ),
    ]);
    assert.deepEqual(Object.keys(documented['/x']?.get?.responses ?? {}), [
      '200',
      '400',
      '404',
      '2XX',
      'default',
    ]);
  });

  test('a route naming a response model the service does not define stops the build, naming the model', () => {
    assert.throws(
      () =>
        paths([route('/x', { name: 'x', responseModel: 'Missing' })], {
          Present: { type: 'object' },
        }),
      {
        message: 'no component schema named Missing',
      },
    );
    const documented = paths([route('/x', { name: 'x', responseModel: 'Present' })], {
      Present: { type: 'object' },
    });
    assert.deepEqual(
      documented['/x']?.get?.responses['200']?.content?.['application/json']?.schema,
      { $ref: '#/components/schemas/Present' },
    );
  });
});
