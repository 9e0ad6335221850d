// The main thread's half of group commit on SQLite (src/db/sqlite/group-commit.ts), shown the replies a
// real writer thread sends only when something is badly wrong: a batch refused as a whole, a reply
// for the wrong batch, a reply that cannot be read. The writer is a scripted stand-in
// (test/support/scripted-writer.ts); the real writer's failures are in
// group-commit-failures.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { GroupCommitWriter } from '../../src/db/sqlite/group-commit.js';
import { serveGroupCommits } from '../../src/db/sqlite/group-commit-worker.js';
import { stateless } from '../../src/db/sqlite/batch-writes.js';
import { isStoreFault, StoreError } from '../../src/db/store-errors.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';
import { UNBOUNDED_WORK } from '../../src/common/work.js';

const SCRIPT = new URL('../support/scripted-writer.js', import.meta.url);

function scripted(script: string): GroupCommitWriter<number, number> {
  return new GroupCommitWriter<number, number>(
    SCRIPT,
    { location: script, synchronous: 'FULL' },
    { sizeOf: () => 1 },
  );
}

/** Each write's outcome: its value, or its error's class and message. */
async function outcomes(writes: readonly Promise<number>[]): Promise<string[]> {
  const settled = await Promise.allSettled(writes);
  return settled.map((s) =>
    s.status === 'fulfilled'
      ? String(s.value)
      : `${s.reason instanceof StoreError ? s.reason.code : (s.reason as Error).name}: ${(s.reason as Error).message}`,
  );
}

test('the writer half refuses to run outside a worker thread, where no one would send it batches', () => {
  assert.throws(
    () => serveGroupCommits(() => stateless(() => undefined)),
    (error: unknown) =>
      error instanceof Error &&
      error.message === 'a group-commit writer runs only as a worker thread',
  );
});

describe(
  'group commit: what the main thread makes of its writer thread’s replies',
  { timeout: SUITE_TIMEOUT_MS },
  () => {
    test('a batch the writer could not commit fails each of its writes with the store error its SQLite code names; the writer goes on', async () => {
      const writer = scripted('refuse SQLITE_FULL database or disk is full');
      try {
        const failed = await Promise.allSettled([
          writer.write(1, UNBOUNDED_WORK),
          writer.write(2, UNBOUNDED_WORK),
        ]);
        for (const result of failed) {
          assert.ok(
            result.status === 'rejected' && isStoreFault(result.reason, 'full'),
            String(result.status === 'rejected' ? result.reason : result.value),
          );
          assert.equal(
            (result.reason as Error).message,
            "the database's disk is full: batch not committed: database or disk is full",
          );
        }
        assert.equal(writer.healthy, true, 'a refused batch does not break the writer');
      } finally {
        await writer.close();
      }
    });

    test('a batch refused with a code that names no store fault fails with a plain error that keeps the code', async () => {
      const writer = scripted('refuse SQLITE_WEIRD something odd');
      try {
        const refused = await writer.write(1, UNBOUNDED_WORK).then(
          () => undefined,
          (error: unknown) => error,
        );
        assert.ok(refused instanceof Error && !isStoreFault(refused, 'unavailable'));
        assert.deepEqual(
          [refused.message, (refused as { code?: unknown }).code],
          ['batch not committed: something odd', 'SQLITE_WEIRD'],
        );
      } finally {
        await writer.close();
      }
    });

    test('a reply for another batch than the oldest out breaks the writer: its writes and every later one fail as unavailable, saying which batch came', async () => {
      const writer = scripted('misnumber');
      const says = 'STORE_UNAVAILABLE: the database writer answered batch 2, 1 was expected';
      assert.deepEqual(
        await outcomes([writer.write(1, UNBOUNDED_WORK), writer.write(2, UNBOUNDED_WORK)]),
        [says, says],
      );
      assert.equal(writer.healthy, false);
      assert.deepEqual(
        await outcomes([writer.write(3, UNBOUNDED_WORK)]),
        [says],
        'later writes fail at once with the same error',
      );
      await writer.close(); // a broken writer is stopped, not asked to close
    });

    test('a reply for a later batch while an earlier one is out breaks the writer too: batches are answered in the order sent', async () => {
      const writer = scripted('swap');
      const first = writer.write(1, UNBOUNDED_WORK);
      await new Promise((resolve) => setImmediate(resolve));
      const second = writer.write(2, UNBOUNDED_WORK);
      const says = 'STORE_UNAVAILABLE: the database writer answered batch 2, 1 was expected';
      assert.deepEqual(await outcomes([first, second]), [says, says]);
      await writer.close();
    });

    test('a reply that cannot be read breaks the writer instead of the process, and fails the writes of its batch', async () => {
      const writer = scripted('garble');
      const [outcome] = await outcomes([writer.write(1, UNBOUNDED_WORK)]);
      assert.match(
        outcome ?? '',
        /^STORE_UNAVAILABLE: the database writer's reply could not be settled: /,
      );
      assert.equal(writer.healthy, false);
      await writer.close();
    });

    test('a healthy writer answers each write with its outcome, and is not healthy once closing; writes after close are refused', async () => {
      const writer = scripted('commit');
      assert.deepEqual(
        await outcomes([writer.write(1, UNBOUNDED_WORK), writer.write(2, UNBOUNDED_WORK)]),
        ['1', '2'],
      );
      assert.equal(writer.healthy, true);
      const closing = writer.close();
      assert.equal(writer.healthy, false, 'closing');
      await closing;
      assert.deepEqual(await outcomes([writer.write(3, UNBOUNDED_WORK)]), [
        'Error: the store is closed',
      ]);
    });
  },
);
