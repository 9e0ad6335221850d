// The rules buildOpenApi draws an operation by, on routes made for the purpose (the services' own
// documents are pinned whole by published-documents.test.ts): what FastAPI lists for an operation,
// and what the route declarations can ask for.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildOpenApi } from '../../src/http/openapi.js';
import { defineRoute, jsonReply, type Route, type RouteDocs } from '../../src/http/route.js';
import { intParam, model, strField, type JsonSchema } from '../../src/http/schema.js';

const id = intParam({ title: 'Id', ge: 0, le: 100 });
const ok = () => jsonReply(200, '{}');

const Note = model('Note', { text: strField('Text') });

function route(path: string, docs: RouteDocs, options: { status?: number; params?: Record<string, typeof id>; body?: typeof Note } = {}): Route {
  return defineRoute({ method: 'GET', path, status: options.status ?? 200, params: options.params ?? {}, body: options.body, docs, handle: ok });
}

interface Operation {
  readonly responses: Record<string, { readonly description: string; readonly content?: unknown }>;
}
type Paths = Record<string, Record<string, Operation>>;

function documentOf(routes: readonly Route[], components: Record<string, JsonSchema> = {}): { paths: Paths; components: { schemas: Record<string, unknown> } } {
  return buildOpenApi({ title: 't', version: '1', routes, components, errorFormat: { name: 'default', catchAll: false } }) as {
    paths: Paths;
    components: { schemas: Record<string, unknown> };
  };
}

const paths = (routes: readonly Route[], components: Record<string, JsonSchema> = {}): Paths => documentOf(routes, components).paths;

describe('how an operation is documented', () => {
  test('a route marked hidden is left out of the document; the others are in it', () => {
    const documented = paths([route('/shown', { name: 'shown' }), route('/internal', { name: 'internal', hidden: true })]);
    assert.deepEqual(Object.keys(documented), ['/shown']);
  });

  test('an operation that takes a path parameter lists the 422 Validation Error; one that takes no input does not', () => {
    const documented = paths([route('/items/{item}', { name: 'item' }, { params: { item: id } }), route('/items', { name: 'items' })]);
    assert.deepEqual(Object.keys(documented['/items/{item}']?.get?.responses ?? {}), ['200', '422', 'default']);
    assert.equal(documented['/items/{item}']?.get?.responses['422']?.description, 'Validation Error');
    assert.deepEqual(Object.keys(documented['/items']?.get?.responses ?? {}), ['200', 'default']);
  });

  test('an operation that takes a body lists the 422 Validation Error too', () => {
    const documented = paths([route('/notes', { name: 'notes' }, { body: Note })]);
    assert.deepEqual(Object.keys(documented['/notes']?.get?.responses ?? {}), ['200', '422', 'default']);
  });

  test('the components are the schemas the operations use: no validation schemas without input, no coded error unless declared', () => {
    assert.deepEqual(Object.keys(documentOf([route('/items', { name: 'items' })]).components.schemas), ['Message']);
    assert.deepEqual(Object.keys(documentOf([route('/items/{item}', { name: 'item' }, { params: { item: id } })]).components.schemas), [
      'HTTPValidationError',
      'Message',
      'ValidationError',
    ]);
    const coded = route('/limits', { name: 'limits', responses: { 403: { description: 'Hidden', model: 'coded-error' } } });
    assert.deepEqual(Object.keys(documentOf([coded]).components.schemas), ['CodedMessage', 'Message']);
  });

  test('a declared response may name a component schema as its body', () => {
    const documented = paths([route('/x', { name: 'x', responses: { 409: { description: 'Conflict', model: 'Present' } } })], { Present: { type: 'object' } });
    assert.deepEqual(documented['/x']?.get?.responses['409'], { description: 'Conflict', content: { 'application/json': { schema: { $ref: '#/components/schemas/Present' } } } });
  });

  test('a 204 success is documented without a body; another success with its JSON body', () => {
    const documented = paths([route('/gone', { name: 'gone' }, { status: 204 }), route('/here', { name: 'here' })]);
    assert.deepEqual(documented['/gone']?.get?.responses['204'], { description: 'Successful Response' });
    assert.deepEqual(documented['/here']?.get?.responses['200'], { description: 'Successful Response', content: { 'application/json': { schema: {} } } });
  });

  test('codes come first in ascending order, then 2XX and default, whatever order the route declares them in', () => {
    const documented = paths([
      route('/x', { name: 'x', otherSuccess: 'Created', responses: { 404: { description: 'Not Found', model: 'error' }, 400: { description: 'Bad', model: 'error' } } }, { params: {} }),
    ]);
    assert.deepEqual(Object.keys(documented['/x']?.get?.responses ?? {}), ['200', '400', '404', '2XX', 'default']);
  });

  test('a route naming a response model the service does not define stops the build, naming the model', () => {
    assert.throws(() => paths([route('/x', { name: 'x', responseModel: 'Missing' })], { Present: { type: 'object' } }), {
      message: 'no component schema named Missing',
    });
    const documented = paths([route('/x', { name: 'x', responseModel: 'Present' })], { Present: { type: 'object' } });
    assert.deepEqual(documented['/x']?.get?.responses['200']?.content, { 'application/json': { schema: { $ref: '#/components/schemas/Present' } } });
  });
});
