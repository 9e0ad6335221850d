// A value there at once or later (src/common/eventually.ts): a read that needs no wait is carried
// on without a promise, and one that must wait is chained, with the same outcome either way.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { inspect } from 'node:util';
import { andThen, isPromise } from '../src/common/eventually.js';

describe('eventually', () => {
  test('a value that is there goes on at once: the outcome is no promise', () => {
    const outcome = andThen(20, (n) => n + 1);
    assert.equal(isPromise(outcome), false);
    assert.equal(outcome, 21);
  });

  test('a value still to come is chained: the outcome is a promise of the same result', async () => {
    const outcome = andThen(Promise.resolve(20), (n) => n + 1);
    assert.equal(isPromise(outcome), true);
    assert.equal(await outcome, 21);
  });

  test('a failure of the next step is thrown at once for a value that is there, and rejects for one to come', async () => {
    const failing = (): never => {
      throw new Error('no such item');
    };
    assert.throws(() => andThen(undefined, failing), /no such item/);
    await assert.rejects(
      Promise.resolve(andThen(Promise.resolve(undefined), failing)),
      /no such item/,
    );
  });

  test('undefined, null and plain objects are values, not promises', () => {
    for (const value of [undefined, null, 0, '', { then: 1 }])
      assert.equal(isPromise(value), false, inspect(value));
    assert.equal(isPromise(Promise.resolve()), true);
  });
});
