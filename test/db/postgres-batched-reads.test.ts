// Point reads on PostgreSQL that arrive together share one query
// (src/db/postgres/batched-reads.ts), here with a scripted lookup in place of the query: what one
// lookup is asked, how many are out at once, and what closing waits for. The same reads against a
// real server are in the store tests; here only how a batch meets its reads' deadlines, on a table
// another session has locked.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { batchedReads } from '../../src/db/postgres/batched-reads.js';
import { openPostgres, type PostgresDatabase } from '../../src/db/postgres/postgres.js';
import { Deadline, DeadlinePassed } from '../../src/common/deadline.js';
import { createTestDatabase, postgresSkip, type TestDatabase } from '../support/postgres.js';
import { suiteUnless } from '../support/suite.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';
import { UNBOUNDED_WORK, type Work } from '../../src/common/work.js';

/** The work of a request bounded by `deadline`. */
const until = (deadline: Deadline): Work => ({ deadline, origin: undefined });

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A lookup of even keys (each maps to ten times itself) whose answers wait until released. */
function heldLookup() {
  const asked: number[][] = [];
  const releases: (() => void)[] = [];
  const lookup = (keys: readonly number[]): Promise<ReadonlyMap<number, number>> => {
    asked.push([...keys]);
    return new Promise((resolve) =>
      releases.push(() =>
        resolve(new Map(keys.filter((k) => k % 2 === 0).map((k) => [k, k * 10]))),
      ),
    );
  };
  const releaseAll = async (): Promise<void> => {
    for (let k = 0; k < 20; k++) {
      releases.splice(0).forEach((release) => release());
      await turn();
    }
  };
  return { asked, lookup, releaseAll };
}

/**
 * A lookup that gives up, as the store's query is cancelled (src/db/postgres/postgres.ts), when the
 * deadline of the work it is given passes; otherwise it answers (each key maps to ten times itself)
 * on answer().
 */
function cancellableLookup() {
  const asked: number[][] = [];
  const answers: (() => void)[] = [];
  const lookup = (
    keys: readonly number[],
    { deadline }: Work,
  ): Promise<ReadonlyMap<number, number>> => {
    asked.push([...keys]);
    return new Promise((resolve, reject) => {
      deadline?.onExpiry(() => reject(new DeadlinePassed()));
      answers.push(() => resolve(new Map(keys.map((k) => [k, k * 10]))));
    });
  };
  return { asked, lookup, answer: () => answers.splice(0).forEach((answer) => answer()) };
}

describe('batched point reads on PostgreSQL', { timeout: SUITE_TIMEOUT_MS }, () => {
  test('reads asked in one turn share one lookup that names each key once; a key without a row reads as undefined', async () => {
    const held = heldLookup();
    const reads = batchedReads(held.lookup, () => 8);
    const answers = Promise.all([2, 3, 2, 4].map((key) => reads.read(key, UNBOUNDED_WORK)));
    await turn();
    await held.releaseAll();
    assert.deepEqual(await answers, [20, undefined, 20, 40]);
    assert.deepEqual(held.asked, [[2, 3, 4]]);
    await reads.close();
  });

  test('one lookup names at most 512 keys', async () => {
    const held = heldLookup();
    const reads = batchedReads(held.lookup, () => 8);
    const answers = Promise.all(
      Array.from({ length: 513 }, (_, key) => reads.read(key, UNBOUNDED_WORK)),
    );
    await turn();
    await held.releaseAll();
    await answers;
    assert.deepEqual(
      held.asked.map((keys) => keys.length),
      [512, 1],
    );
    await reads.close();
  });

  test('at most four lookups are out at once, leaving the rest of the pool to writes and readiness', async () => {
    const held = heldLookup();
    const reads = batchedReads(held.lookup, () => 8);
    const answers: Promise<number | undefined>[] = [];
    for (let key = 0; key < 6; key++) {
      answers.push(reads.read(key, UNBOUNDED_WORK));
      await turn();
      await turn();
    }
    assert.equal(held.asked.length, 4, 'four out; the later reads wait');
    await held.releaseAll();
    assert.deepEqual(await Promise.all(answers), [0, undefined, 20, undefined, 40, undefined]);
    assert.deepEqual(held.asked.flat(), [0, 1, 2, 3, 4, 5]);
    await reads.close();
  });

  test('a deadline fails only its own read: a batch-mate still within its time gets its answer', async () => {
    const held = cancellableLookup();
    const reads = batchedReads(held.lookup, () => 8);
    const [early, late] = [new Deadline(), new Deadline()];
    const first = reads.read(2, until(early)).catch((error: unknown) => error);
    const second = reads.read(4, until(late)).catch((error: unknown) => error);
    await turn();
    assert.deepEqual(held.asked, [[2, 4]], 'one lookup for both');
    early.expire();
    await turn();
    held.answer();
    assert.equal(await second, 40);
    assert.equal(await first, 20, 'its request was answered 504 meanwhile; the answer is dropped');
    await reads.close();
  });

  test('a batch whose every read is past its deadline is given up; a read without a deadline keeps it going', async () => {
    const held = cancellableLookup();
    const reads = batchedReads(held.lookup, () => 8);
    const deadlines = [new Deadline(), new Deadline()];
    const expired = deadlines.map((deadline, i) =>
      reads.read(i * 2, until(deadline)).catch((error: unknown) => error),
    );
    await turn();
    for (const deadline of deadlines) deadline.expire();
    for (const answer of await Promise.all(expired)) assert.ok(answer instanceof DeadlinePassed);

    const unbounded = reads.read(6, UNBOUNDED_WORK);
    const bounded = reads.read(8, until(new Deadline()));
    await turn();
    held.answer();
    assert.deepEqual(await Promise.all([unbounded, bounded]), [60, 80]);
    await reads.close();
  });

  test('close() answers every read asked before it, then refuses new ones', async () => {
    const held = heldLookup();
    const reads = batchedReads(held.lookup, () => 8);
    const before = reads.read(2, UNBOUNDED_WORK);
    let closed = false;
    const closing = reads.close().then(() => (closed = true));
    await turn();
    assert.equal(closed, false, 'not closed while a read is out');
    await held.releaseAll();
    assert.equal(await before, 20);
    await closing;
    await assert.rejects(reads.read(4, UNBOUNDED_WORK), /closed/);
  });
});

suiteUnless(
  await postgresSkip(),
  'batched point reads on a real server, under their deadlines',
  () => {
    let database: TestDatabase;
    let db: PostgresDatabase;
    let locker: pg.Client;
    const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
    const waitingOnLocks = async (): Promise<number> =>
      Number(
        (
          await locker.query<{ n: string }>(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()",
          )
        ).rows[0]?.n,
      );

    before(async () => {
      database = await createTestDatabase();
      db = await openPostgres({
        url: database.url,
        service: 'batched-reads-test',
        migrations: [
          { version: 1, sql: 'CREATE TABLE kv (k INTEGER PRIMARY KEY, v INTEGER NOT NULL)' },
        ],
        seed: async (session) =>
          void (await session.query(
            'INSERT INTO kv SELECT k, k * 10 FROM generate_series(1, 10) AS k',
          )),
      });
      locker = new pg.Client({ connectionString: database.url });
      locker.on('error', () => undefined);
      await locker.connect();
    });
    after(async () => {
      await locker?.end();
      await db?.close();
      await database?.drop();
    });

    const open = () =>
      batchedReads<number, number>(
        async (keys, work) => {
          const { rows } = await db.query<{ k: number; v: number }>(
            'SELECT k, v FROM kv WHERE k = ANY($1::int[])',
            [keys],
            undefined,
            work,
          );
          return new Map(rows.map((row) => [row.k, row.v]));
        },
        () => 8,
      );

    test('a deadline fails only its own read: its batch-mate, still within its time, gets its answer from the server', async () => {
      const reads = open();
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE kv IN ACCESS EXCLUSIVE MODE');
      const [early, late] = [new Deadline(), new Deadline()];
      let second: Promise<unknown>;
      try {
        void reads.read(1, until(early)).catch(() => undefined);
        second = reads.read(2, until(late)).catch((error: unknown) => error);
        await sleep(200);
        assert.equal(await waitingOnLocks(), 1, 'one query for both, waiting for the lock');
        early.expire();
        await sleep(300);
        assert.equal(
          await waitingOnLocks(),
          1,
          'not cancelled: a read in it is still within its time',
        );
      } finally {
        await locker.query('ROLLBACK');
      }
      assert.equal(await second, 20);
      await reads.close();
    });

    test('once every read of the batch is past its deadline, its query is cancelled on the server', async () => {
      const reads = open();
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE kv IN ACCESS EXCLUSIVE MODE');
      try {
        const deadlines = [new Deadline(), new Deadline()];
        const answers = deadlines.map((deadline, i) =>
          reads.read(i + 1, until(deadline)).catch((error: unknown) => error),
        );
        await sleep(200);
        for (const deadline of deadlines) deadline.expire();
        for (const answer of await Promise.all(answers))
          assert.ok(answer instanceof DeadlinePassed, String(answer));
        assert.equal(await waitingOnLocks(), 0, 'the statement is gone, before statement_timeout');
      } finally {
        await locker.query('ROLLBACK');
      }
      await reads.close();
    });
  },
);
