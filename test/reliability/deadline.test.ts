// Request deadlines (src/features/deadlines/deadline.ts) against stores that really hang: a SQLite file
// whose write lock another connection holds, a PostgreSQL table another session has locked. The
// service is a real process; the 504 comes on time, the work nobody waits for is given up (a queued
// write dropped, a PostgreSQL read cancelled on the server), and a write that had started finishes
// and is found again under its Idempotency-Key.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { send, type RawResponse } from '../support/http.js';
import { createTestDatabase, postgresSkip, type TestDatabase } from '../support/postgres.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

const DEADLINE_MS = 500;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Timed {
  readonly res: RawResponse;
  readonly tookMs: number;
}

async function timed(request: Promise<RawResponse>): Promise<Timed> {
  const started = performance.now();
  const res = await request;
  return { res, tookMs: performance.now() - started };
}

const create = (url: string, key: string, title: string): Promise<RawResponse> =>
  send(url, {
    method: 'POST',
    path: '/todos',
    headers: [
      ['Content-Type', 'application/json'],
      ['Idempotency-Key', key],
    ],
    body: JSON.stringify({ title, done: false }),
  });

/** The retry a client makes after a 504: the same request, the same key, until it is no longer in flight (409). */
async function retried(url: string, key: string, title: string): Promise<RawResponse> {
  for (let tries = 0; tries < 100; tries++) {
    const res = await create(url, key, title);
    if (res.status !== 409) return res;
    await sleep(100);
  }
  return assert.fail(`${key} still in flight`);
}

function assertDeadlineAnswer({ res, tookMs }: Timed, what: string): void {
  assert.equal(res.status, 504, `${what}: ${res.status} ${res.text}`);
  assert.equal(res.headers['retry-after'], '1', what);
  assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/, what);
  assert.deepEqual(JSON.parse(res.text), {
    detail: {
      code: 'DEADLINE_EXCEEDED',
      message:
        'The request was not answered within the time the service allows it; it may still take effect',
    },
  });
  assert.ok(
    tookMs >= DEADLINE_MS - 20 && tookMs < DEADLINE_MS + 1_000,
    `${what}: answered after ${Math.round(tookMs)} ms`,
  );
}

describe(
  'deadlines on SQLite, whose write lock another connection holds',
  { timeout: SUITE_TIMEOUT_MS },
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'deadline-'));
    const file = join(dir, 'todo.sqlite');
    let service: ServiceProcess;
    let url: string;

    before(async () => {
      service = await startServiceProcess([
        'todo',
        '--db',
        `sqlite:${file}`,
        '--deadline-ms',
        String(DEADLINE_MS),
      ]);
      url = service.urls[0] as string;
    });
    after(async () => {
      await service.kill();
      rmSync(dir, { recursive: true, force: true });
    });

    test('each waiting write is answered 504 at its deadline; the queued one is dropped, the started ones finish and replay under their keys', async () => {
      const holder = new Database(file);
      holder.pragma('busy_timeout = 0');
      holder.exec('BEGIN IMMEDIATE');
      let released = false;
      try {
        // Apart, so that each goes its own way: the first batch is sent to the writer thread (which
        // waits for the lock), the second follows it (two batches are out at most), the third
        // queues.
        const first = timed(create(url, 'first', 'one'));
        await sleep(100);
        const second = timed(create(url, 'second', 'two'));
        await sleep(100);
        const third = timed(create(url, 'third', 'three'));
        const answers = await Promise.all([first, second, third]);
        answers.forEach((answer, k) => assertDeadlineAnswer(answer, `write ${k + 1}`));
        holder.exec('COMMIT');
        released = true;

        const firstAgain = await retried(url, 'first', 'one');
        assert.equal(firstAgain.status, 201, firstAgain.text);
        assert.equal(
          firstAgain.headers['idempotent-replayed'],
          'true',
          'the started write finished, and its answer is replayed',
        );
        const secondAgain = await retried(url, 'second', 'two');
        assert.equal(secondAgain.headers['idempotent-replayed'], 'true');
        const thirdAgain = await retried(url, 'third', 'three');
        assert.equal(thirdAgain.status, 201, thirdAgain.text);
        assert.equal(
          thirdAgain.headers['idempotent-replayed'],
          undefined,
          'the queued write was dropped: it runs now, for the first time',
        );
        const titles = holder
          .prepare<[], { title: string }>('SELECT title FROM todos ORDER BY id')
          .all()
          .map((row) => JSON.parse(row.title) as string);
        assert.deepEqual(
          titles,
          ['Buy milk', 'one', 'two', 'three'],
          'every write once, none twice',
        );
      } finally {
        if (!released) holder.exec('ROLLBACK');
        holder.close();
      }
    });

    test('a request that does not wait is not touched, and the service answers on once the lock is gone', async () => {
      const res = await send(url, { method: 'GET', path: '/todos/1' });
      assert.equal(res.status, 200);
      assert.equal(res.headers['retry-after'], undefined);
    });
  },
);

describe(
  'deadlines on PostgreSQL, whose table another session has locked',
  { timeout: SUITE_TIMEOUT_MS, skip: await postgresSkip() },
  () => {
    let database: TestDatabase;
    let service: ServiceProcess;
    let url: string;
    let locker: pg.Client;
    let watcher: pg.Client;

    before(async () => {
      database = await createTestDatabase();
      service = await startServiceProcess([
        'todo',
        '--db',
        database.url,
        '--deadline-ms',
        String(DEADLINE_MS),
      ]);
      url = service.urls[0] as string;
      // The schema exists once a request has gone through.
      assert.equal((await send(url, { method: 'GET', path: '/todos/1' })).status, 200);
      locker = new pg.Client({ connectionString: database.url });
      watcher = new pg.Client({ connectionString: database.url });
      await Promise.all([locker.connect(), watcher.connect()]);
    });
    after(async () => {
      await Promise.allSettled([locker.end(), watcher.end()]);
      await service.kill();
      await database.drop();
    });

    /** The service's statements that wait for a lock now. */
    const waitingOnLocks = async (): Promise<number> => {
      const { rows } = await watcher.query<{ n: string }>(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'status-services todo' AND wait_event_type = 'Lock'",
      );
      return Number(rows[0]?.n);
    };

    test('a read waiting for a lock is answered 504 at its deadline, and its statement is cancelled on the server, well before statement_timeout', async () => {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE todos IN ACCESS EXCLUSIVE MODE');
      try {
        const started = performance.now();
        const read = timed(send(url, { method: 'GET', path: '/todos/1' }));
        await sleep(DEADLINE_MS / 2);
        assert.equal(await waitingOnLocks(), 1, 'the read waits for the lock');
        assertDeadlineAnswer(await read, 'the read');
        // statement_timeout (1.5 s) would end it too: it must be gone before.
        while ((await waitingOnLocks()) > 0) {
          assert.ok(
            performance.now() - started < 1_200,
            'the statement still waits: it was not cancelled',
          );
          await sleep(20);
        }
      } finally {
        await locker.query('ROLLBACK');
      }
      assert.equal(
        (await send(url, { method: 'GET', path: '/todos/1' })).status,
        200,
        'the service reads on',
      );
    });

    test('a write that had started is let finish once the lock is gone, and replays under its key', async () => {
      await locker.query('BEGIN');
      // Every batch of writes takes this advisory lock first (src/todo/store-postgres.ts).
      await locker.query('SELECT pg_advisory_xact_lock(7310002)');
      let committed = false;
      try {
        assertDeadlineAnswer(await timed(create(url, 'pg-first', 'one')), 'the write');
        await locker.query('COMMIT');
        committed = true;
      } finally {
        if (!committed) await locker.query('ROLLBACK');
      }
      const again = await retried(url, 'pg-first', 'one');
      assert.equal(again.status, 201, again.text);
      assert.equal(again.headers['idempotent-replayed'], 'true');
    });
  },
);
