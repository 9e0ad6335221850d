// A process whose only work is a SQLite file store's writes (group-commit-exit.test.ts): it writes,
// prints what it was answered, and neither closes the store nor exits on purpose. Whether it exits,
// and when, shows whether the writer thread keeps it alive: while writes are out, and not after.
//   node idle-writer-child.js <file> <writes in the first turn>,<in the second>,…
import { openTestWriteStore } from './test-store.js';
import { UNBOUNDED_WORK } from '../../src/common/work.js';
import { ran } from './keys.js';

const [location, turnsText] = process.argv.slice(2);
const store = await openTestWriteStore(location as string);
// The writes of one turn leave as one batch, sent at the end of that turn: a large first batch is
// still committing when the second is sent, so two are out at once, then one, with nothing but
// the writer holding the process.
const answers: Promise<number>[] = [];
for (const count of (turnsText as string).split(',').map(Number)) {
  for (let n = 0; n < count; n++)
    answers.push(ran(store.write({ kind: 'insert', value: n }, undefined, UNBOUNDED_WORK)));
  await new Promise((resolve) => setImmediate(resolve));
}
const outcomes = await Promise.all(answers);
process.stdout.write(`${outcomes.length} written\n`);
