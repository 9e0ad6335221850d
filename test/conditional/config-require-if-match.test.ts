// --require-if-match and SVC_REQUIRE_IF_MATCH: off by default, on from either, and a clear error
// for a value that is neither on nor off.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, readConfig } from '../../src/config.js';

test('If-Match is not required unless --require-if-match or SVC_REQUIRE_IF_MATCH says so', () => {
  assert.equal(readConfig([], {}).requireIfMatch, false);
  assert.equal(readConfig(['--require-if-match'], {}).requireIfMatch, true);
  for (const value of ['1', 'true'])
    assert.equal(readConfig([], { SVC_REQUIRE_IF_MATCH: value }).requireIfMatch, true, value);
  for (const value of ['0', 'false', ''])
    assert.equal(readConfig([], { SVC_REQUIRE_IF_MATCH: value }).requireIfMatch, false, value);
});

test('--require-if-match takes no value, and SVC_REQUIRE_IF_MATCH only 1 or 0', () => {
  assert.throws(() => readConfig(['--require-if-match=yes'], {}), {
    name: 'ConfigError',
    message: '--require-if-match takes no value',
  });
  assert.throws(
    () => readConfig([], { SVC_REQUIRE_IF_MATCH: 'yes' }),
    (error: unknown) =>
      error instanceof ConfigError && error.message === 'SVC_REQUIRE_IF_MATCH must be 1 or 0',
  );
});
