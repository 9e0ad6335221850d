// The router on its own (src/http/routing.ts): which route a request-target reaches, the trailing-
// slash redirect at its edges, and Python's unquote at the edges of what a percent escape is. The
// same rules through real servers are in contract-layer.test.ts and the conformance corpus.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Router, unquote } from '../../src/http/routing.js';

const router = new Router([
  { method: 'GET', path: '/' },
  { method: 'GET', path: '/todos' },
  { method: 'GET', path: '/todos/{id}' },
  { method: 'GET', path: '/braces/{open' },
  { method: 'GET', path: '/braces/close}' },
]);
const kindOf = (target: string): string => {
  const match = router.match('GET', target);
  return match.kind === 'redirect'
    ? `redirect ${match.location}`
    : match.kind === 'route'
      ? `route ${match.route.path} ${JSON.stringify(match.values)}`
      : match.kind;
};

describe('the router', () => {
  test('a request-target that is not a path (asterisk or absolute form, or no leading slash) reaches no route', () => {
    assert.deepEqual(['*', 'todos', 'x/todos', 'http://host/todos'].map(kindOf), [
      'not-found',
      'not-found',
      'not-found',
      'not-found',
    ]);
  });

  test('a trailing slash redirects to the path without it, keeping a query; / itself and a path of slashes only do not redirect', () => {
    assert.deepEqual(['/todos/', '/todos///', '/todos/?a=1', '/todos/?', '/todos/1/'].map(kindOf), [
      'redirect /todos',
      'redirect /todos',
      'redirect /todos?a=1',
      'redirect /todos',
      'redirect /todos/1',
    ]);
    assert.deepEqual(['/', '//', '///'].map(kindOf), ['route / []', 'not-found', 'not-found']);
    assert.deepEqual(
      ['/nothing/', '/todos/1/2/'].map(kindOf),
      ['not-found', 'not-found'],
      'no redirect to a path no route has',
    );
  });

  test('a parameter takes its segment, percent-decoded on its own: %2F is data, not a separator', () => {
    assert.deepEqual(['/todos/7', '/todos/%41b', '/todos/a%2Fb', '/todos/a%2'].map(kindOf), [
      'route /todos/{id} ["7"]',
      'route /todos/{id} ["Ab"]',
      'route /todos/{id} ["a/b"]',
      'route /todos/{id} ["a%2"]',
    ]);
  });

  test('a segment with one brace only is a literal, not a parameter', () => {
    assert.deepEqual(['/braces/{open', '/braces/close}', '/braces/x'].map(kindOf), [
      'route /braces/{open []',
      'route /braces/close} []',
      'not-found',
    ]);
  });
});

describe("unquote, as Python's urllib.parse.unquote", () => {
  test('an escape is % and two hex digits, upper or lower case: the characters just outside each range are not hex', () => {
    assert.equal(unquote('%41%5a%7A%30%39%61%66%46%6f%6F'), 'AZz09afFoo');
    for (const notHex of ['/', ':', '@', 'G', '`', 'g']) {
      assert.equal(unquote(`%${notHex}1`), `%${notHex}1`, `%${notHex}1 stays as written`);
      assert.equal(unquote(`%1${notHex}`), `%1${notHex}`, `%1${notHex} stays as written`);
    }
  });

  test('an escape cut short at the end stays as written', () => {
    assert.deepEqual(['%', '%4', 'a%4', '%41%4'].map(unquote), ['%', '%4', 'a%4', 'A%4']);
  });

  test('escaped bytes are UTF-8 together, and bytes that are not UTF-8 become U+FFFD', () => {
    assert.equal(unquote('caf%C3%A9%20%E2%82%AC'), 'café €');
    assert.equal(unquote('%FF'), '\uFFFD');
    assert.equal(
      unquote('%C3x%A9'),
      '\uFFFDx\uFFFD',
      'a byte run ends at the first character that is not an escape',
    );
  });

  test('an escaped byte order mark is a character of the segment, at the start of a run too', () => {
    assert.deepEqual(['%EF%BB%BF1', 'x%EF%BB%BF', '%EF%BB%BF', 'a%EF%BB%BFb'].map(unquote), [
      '\uFEFF1',
      'x\uFEFF',
      '\uFEFF',
      'a\uFEFFb',
    ]);
  });
});
