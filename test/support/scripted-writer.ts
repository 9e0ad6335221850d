// A stand-in for a group-commit writer thread that answers as its script (the setup's `location`)
// says, so that the main thread's half (src/db/sqlite/group-commit.ts) can be shown replies a real writer
// only sends when something is badly wrong:
// - `commit`: commits every batch, each operation's outcome its own value;
// - `misnumber`: answers each batch under the next batch's number;
// - `refuse CODE MESSAGE`: refuses every batch as a whole (COMMIT failed) with that SQLite code;
// - `garble`: answers a batch with a reply that has no results;
// - `swap`: holds the first batch until the second comes, then answers the second first.
// On `close` it exits, as the real writer does once its connection is closed.
import { parentPort, workerData } from 'node:worker_threads';
import type {
  FromWriter,
  GroupCommitSetup,
  ToWriter,
} from '../../src/db/sqlite/group-commit-protocol.js';

const [script = 'commit', code, ...words] = (workerData as GroupCommitSetup).location.split(' ');
const port = parentPort;
if (port === null) throw new Error('the scripted writer runs in a worker thread');

const committed = (batch: number, ops: readonly number[]): FromWriter<number> => ({
  kind: 'committed',
  batch,
  outcomes: ops,
});
let held: FromWriter<number> | undefined;

port.on('message', (message: ToWriter<number>) => {
  if (message.kind === 'close') process.exit(0);
  const { batch, ops } = message;
  if (script === 'swap') {
    if (held === undefined) {
      held = committed(batch, ops);
    } else {
      port.postMessage(committed(batch, ops));
      port.postMessage(held);
    }
    return;
  }
  const reply = ((): FromWriter<number> | Record<string, unknown> => {
    switch (script) {
      case 'misnumber':
        return committed(batch + 1, ops);
      case 'refuse':
        return { kind: 'failed', batch, code, message: words.join(' ') };
      case 'garble':
        return { kind: 'committed', batch };
      default:
        return committed(batch, ops);
    }
  })();
  port.postMessage(reply);
});
