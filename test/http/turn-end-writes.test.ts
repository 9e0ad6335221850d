// Answers are written at the end of the event-loop turn, all together
// (src/http/turn-end-writes.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate as nextTurnEnd } from 'node:timers/promises';
import { writesAtTurnEnd } from '../../src/http/turn-end-writes.js';

test('nothing queued is written before the end of the turn, not even after the microtasks', async () => {
  const written: string[] = [];
  const queue = writesAtTurnEnd<string>(
    (item) => written.push(item),
    () => assert.fail('no write fails'),
  );
  queue('a');
  await Promise.resolve();
  assert.deepEqual(written, []);
  await nextTurnEnd();
  assert.deepEqual(written, ['a']);
});

test('the answers of one turn are written together, in the order they were queued', async () => {
  const written: string[] = [];
  const queue = writesAtTurnEnd<string>(
    (item) => written.push(item),
    () => assert.fail('no write fails'),
  );
  queue('first');
  // Runs at the end of this turn, right after the step that writes: it sees all three written only
  // if that one step wrote them all, the ones queued after it was scheduled too.
  const seenAtTurnEnd = nextTurnEnd().then(() => [...written]);
  await Promise.resolve(); // an answer that came after an await, in the same turn
  queue('second');
  queue('third');
  assert.deepEqual(await seenAtTurnEnd, ['first', 'second', 'third']);
});

test('a write that throws hands its item to `failed`, and the other writes of the turn still run', async () => {
  const written: string[] = [];
  const failed: [string, unknown][] = [];
  const refusal = new Error('refused');
  const queue = writesAtTurnEnd<string>(
    (item) => {
      if (item === 'bad') throw refusal;
      written.push(item);
    },
    (item, error) => failed.push([item, error]),
  );
  for (const item of ['before', 'bad', 'after']) queue(item);
  await nextTurnEnd();
  assert.deepEqual(written, ['before', 'after']);
  assert.deepEqual(failed, [['bad', refusal]]);
});

test("an answer queued while a turn's answers are being written goes out at the end of the next turn", async () => {
  const written: string[] = [];
  const queue = writesAtTurnEnd<string>(
    (item) => {
      written.push(item);
      if (item === 'first') queue('queued while writing');
    },
    () => assert.fail('no write fails'),
  );
  queue('first');
  await nextTurnEnd();
  assert.deepEqual(written, ['first']);
  await nextTurnEnd();
  assert.deepEqual(written, ['first', 'queued while writing']);
});
