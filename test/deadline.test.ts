// A request's deadline as the work behind it sees it (src/common/deadline.ts): what is registered
// is given up once, in order, when the deadline passes; and the deadline of work shared by several
// requests passes when the last of theirs does.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Deadline, latestOf } from '../src/common/deadline.js';

test('a deadline gives up what was registered, once, in the order it registered, when it passes', () => {
  const deadline = new Deadline();
  const given: string[] = [];
  deadline.onExpiry(() => given.push('first'));
  deadline.onExpiry(() => given.push('second'));
  assert.equal(deadline.expired, false);
  assert.deepEqual(given, [], 'nothing is given up before it passes');
  deadline.expire();
  assert.equal(deadline.expired, true);
  assert.deepEqual(given, ['first', 'second']);
  deadline.expire();
  assert.deepEqual(given, ['first', 'second'], 'passing again gives nothing up twice');
});

test('work registered on a deadline that has passed is given up at once', () => {
  const deadline = new Deadline();
  deadline.expire();
  let given = 0;
  const forget = deadline.onExpiry(() => (given += 1));
  assert.equal(given, 1);
  forget();
  assert.equal(given, 1);
});

test('work forgotten before the deadline passes is not given up', () => {
  const deadline = new Deadline();
  const given: string[] = [];
  const forgetDone = deadline.onExpiry(() => given.push('done'));
  deadline.onExpiry(() => given.push('waiting'));
  forgetDone();
  deadline.expire();
  assert.deepEqual(given, ['waiting']);
});

test('a shared deadline passes when the last of its requests’ deadlines does, not before', () => {
  const [a, b, c] = [new Deadline(), new Deadline(), new Deadline()];
  const shared = latestOf([a, b, c]);
  assert.ok(shared !== undefined);
  let given = 0;
  shared.onExpiry(() => (given += 1));
  a.expire();
  assert.equal(shared.expired, false, 'the first deadline to pass leaves its batch-mates waiting');
  c.expire();
  assert.equal(shared.expired, false);
  assert.equal(given, 0);
  b.expire();
  assert.equal(shared.expired, true);
  assert.equal(given, 1);
});

test('a shared deadline counts each request once, however often its own deadline is passed', () => {
  const [a, b] = [new Deadline(), new Deadline()];
  const shared = latestOf([a, b]) as Deadline;
  a.expire();
  a.expire();
  assert.equal(shared.expired, false);
  b.expire();
  assert.equal(shared.expired, true);
});

test('a shared deadline made from deadlines that have all passed has passed', () => {
  const [a, b] = [new Deadline(), new Deadline()];
  a.expire();
  b.expire();
  assert.equal(latestOf([a, b])?.expired, true);
});

test('work shared with a request that has no deadline, or with no request, has none', () => {
  assert.equal(latestOf([new Deadline(), undefined]), undefined);
  assert.equal(latestOf([]), undefined);
});
