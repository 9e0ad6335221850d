// Which Content-Type makes a body JSON (src/http/body.ts, isJsonMediaType): Python's email.message
// rules as FastAPI applies them. Through real servers, the corpus has the common cases; these are
// the edges of the rule.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isJsonMediaType } from '../../src/http/body.js';

test('application/json and application/…+json are JSON, whatever their case, spaces and parameters', () => {
  for (const type of [
    'application/json',
    ' Application/JSON ; charset=utf-8',
    'application/problem+json',
    'application/vnd.api+json;v=1',
  ]) {
    assert.equal(isJsonMediaType(type), true, type);
  }
});

test('anything else is not: another main type or subtype, no slash, two slashes, or none at all', () => {
  for (const type of [
    'text/json',
    'applicationx/json',
    'application/jsonx',
    'application/json+x',
    'application',
    '/json',
    'application/',
    'application//json',
    'application/json/x',
    'application/vnd+json/x',
    'application/x/+json',
    'application/vnd/api+json',
    '',
  ]) {
    assert.equal(isJsonMediaType(type), false, JSON.stringify(type));
  }
  assert.equal(isJsonMediaType(undefined), false);
});
