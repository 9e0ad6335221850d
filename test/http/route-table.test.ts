// The route table is checked at start-up: a server whose routes cannot all be reached, or whose
// parameters do not match their paths, refuses to start and says which route is at fault.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { defineRoute, jsonReply, type Route } from '../../src/http/route.js';
import { assertRouteTable, RouteTableError } from '../../src/http/route-table.js';
import { intParam, strParam } from '../../src/http/validation/schema.js';
import type { ServiceDefinition } from '../../src/http/service.js';
import { createLogger } from '../../src/observe/log.js';
import { startServer } from '../../src/server.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

const id = intParam({ title: 'Id', ge: 0, le: 100 });
const name = strParam('Name');
const ok = () => jsonReply(200, '{}');
const route = (
  method: 'GET' | 'POST',
  path: string,
  params: Record<string, typeof id | typeof name> = {},
): Route =>
  defineRoute({
    method,
    path,
    status: 200,
    params,
    docs: { name: `${method} ${path}`, example: '{}' },
    handle: ok,
  });

/** Asserts that the table is refused with a RouteTableError whose message is exactly `message`. */
function assertRefused(
  service: readonly Route[],
  builtIn: readonly Route[],
  message: string,
): void {
  assert.throws(
    () => assertRouteTable({ service, builtIn }),
    (error: unknown) => {
      assert.ok(error instanceof RouteTableError);
      assert.equal(error.code, 'ROUTE_TABLE_INVALID');
      assert.equal(error.message, message);
      return true;
    },
  );
}

describe('route table assertions at start-up', { timeout: SUITE_TIMEOUT_MS }, () => {
  test('a table whose parameters match their paths, without duplicates or overlaps, is accepted', () => {
    assertRouteTable({
      service: [
        route('GET', '/items/{id}', { id }),
        route('POST', '/items/{id}', { id }),
        route('GET', '/items'),
        route('GET', '/docsy/{name}', { name }),
      ],
      builtIn: [
        route('GET', '/docs'),
        route('GET', '/healthz'),
        route('POST', '/docs/{name}', { name }),
      ],
    });
  });

  test('paths are told apart segment by segment: /ab/c and /a/bc are two routes', () => {
    assertRouteTable({ service: [route('GET', '/ab/c'), route('GET', '/a/bc')], builtIn: [] });
  });

  test('a segment with one brace only is a literal, not a placeholder', () => {
    assertRouteTable({
      service: [route('GET', '/files/{x'), route('GET', '/files/y}')],
      builtIn: [route('GET', '/files/docs')],
    });
  });

  test('a path placeholder without a parameter spec is refused', () => {
    assertRefused(
      [route('GET', '/items/{item_id}', { id })],
      [],
      'route GET /items/{item_id} has no parameter spec for its placeholder {item_id}',
    );
  });

  test('a parameter spec without a path placeholder is refused', () => {
    assertRefused(
      [route('GET', '/items/{id}', { id, name })],
      [],
      'route GET /items/{id} has a parameter spec "name" that its path does not contain',
    );
  });

  test('a path naming one placeholder twice is refused', () => {
    assertRefused(
      [route('GET', '/items/{id}/{id}', { id })],
      [],
      'route GET /items/{id}/{id} names a path placeholder twice',
    );
  });

  test('two routes with the same method and path are refused', () => {
    assertRefused(
      [route('GET', '/items/{id}', { id }), route('GET', '/items/{id}', { id })],
      [],
      'routes GET /items/{id} and GET /items/{id} share a method and path',
    );
  });

  test('two routes whose paths differ only in placeholder names are refused', () => {
    assertRefused(
      [route('GET', '/items/{id}', { id }), route('GET', '/items/{name}', { name })],
      [],
      'routes GET /items/{id} and GET /items/{name} share a method and path',
    );
  });

  test('a built-in route that a service route would also match is refused, whichever side holds the placeholder', () => {
    const message = (builtIn: string, service: string): string =>
      `the built-in route GET ${builtIn} overlaps the service route GET ${service}: one would answer requests meant for the other`;
    assertRefused(
      [route('GET', '/{name}', { name })],
      [route('GET', '/docs')],
      message('/docs', '/{name}'),
    );
    assertRefused(
      [route('GET', '/docs')],
      [route('GET', '/{name}', { name })],
      message('/{name}', '/docs'),
    );
    assertRefused(
      [route('GET', '/healthz')],
      [route('GET', '/healthz')],
      message('/healthz', '/healthz'),
    );
  });

  test('a built-in route with another method, or another number of segments, does not overlap', () => {
    assertRouteTable({
      service: [route('POST', '/{name}', { name }), route('GET', '/docs/{name}/x', { name })],
      builtIn: [route('GET', '/docs')],
    });
  });

  test('a placeholder never matches an empty segment, so "/" overlaps no "/{name}"', () => {
    assertRouteTable({
      service: [route('GET', '/{name}', { name })],
      builtIn: [route('GET', '/')],
    });
    assertRouteTable({
      service: [route('GET', '/')],
      builtIn: [route('GET', '/{name}', { name })],
    });
  });

  test('a server whose service declares /docs does not start, and says why', async () => {
    const service: ServiceDefinition = {
      title: 't',
      version: '0',
      components: {},
      routes: [route('GET', '/docs')],
      ready: () => Promise.resolve(true),
      close: () => Promise.resolve(),
    };
    await assert.rejects(
      startServer(service, {
        host: '127.0.0.1',
        port: 0,
        errorFormat: { name: 'default', catchAll: false },
        log: createLogger('silent'),
        service: 't',
      }),
      {
        name: 'RouteTableError',
        message:
          'the built-in route GET /docs overlaps the service route GET /docs: one would answer requests meant for the other',
      },
    );
  });
});
