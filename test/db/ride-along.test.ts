// The shared limiter's decisions ride in a store's reads (src/db/postgres/ride-along.ts), on a real
// PostgreSQL: a read and a decision asked together cost one statement, not two; a carried decision
// is the one it would be alone; and a carrier that fails but for an outage leaves each party to
// run its own statement, so that neither is refused for the other's sake.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { Deadline, DeadlinePassed } from '../../src/common/deadline.js';
import {
  openPostgresRateLimiter,
  type PostgresRateLimiter,
} from '../../src/db/postgres/rate-limits.js';
import type { Rider } from '../../src/db/postgres/ride-along.js';
import { openPostgresTodoStore } from '../../src/todo/store-postgres.js';
import type { TodoStore } from '../../src/todo/store.js';
import { createTestDatabase, postgresSkip, type TestDatabase } from '../support/postgres.js';
import { startStatementCounter, type StatementCounter } from '../support/statement-counter.js';
import { suiteUnless } from '../support/suite.js';
import { UNBOUNDED_WORK } from '../../src/common/work.js';

const skip = await postgresSkip();

/** Limits whose window is long: no pruning round runs during a test, so every statement is the test's. */
const BURST = 3;
const LIMITS = { reads: { perSecond: 0.01, burst: BURST } };

suiteUnless(skip, "decisions that ride in a store's reads", () => {
  let database: TestDatabase;
  let counter: StatementCounter;
  let proxied: string;
  const closing: (() => Promise<void>)[] = [];

  const limiter = async (): Promise<PostgresRateLimiter> => {
    const opened = await openPostgresRateLimiter({ url: proxied, service: 'todo', limits: LIMITS });
    closing.push(() => opened.close());
    return opened;
  };
  const store = async (rider: Rider | undefined): Promise<TodoStore> => {
    const opened = await openPostgresTodoStore(proxied, { rider });
    closing.push(() => opened.close());
    // Each pooled connection prepares its statements on first use: warmed, so that counts are steady.
    await Promise.all(Array.from({ length: 8 }, () => opened.get(1, UNBOUNDED_WORK)));
    return opened;
  };
  /** The statements `work` sent through the proxy. */
  const statementsOf = async (work: () => Promise<unknown>): Promise<number> => {
    const before = counter.statements;
    await work();
    return counter.statements - before;
  };

  before(async () => {
    database = await createTestDatabase();
    const url = new URL(database.url);
    counter = await startStatementCounter(url.hostname, Number(url.port || 5432));
    url.hostname = '127.0.0.1';
    url.port = String(counter.port);
    proxied = url.toString();
  });
  after(async () => {
    for (const close of closing.reverse()) await close();
    await counter.close();
    await database.drop();
  });

  test('reads and decisions asked together reach PostgreSQL as one statement; without a rider, two', async () => {
    const shared = await limiter();
    const carrying = await store(shared.rider);
    const alone = await store(undefined);
    const together = (todos: TodoStore, client: string) => () =>
      Promise.all([
        ...Array.from({ length: 3 }, () => todos.get(1, UNBOUNDED_WORK)),
        ...Array.from({ length: 3 }, (_, i) => shared.decide('reads', `${client}-${i}`)),
      ]);
    assert.equal(await statementsOf(together(carrying, 'carried')), 1);
    assert.equal(await statementsOf(together(alone, 'alone')), 2);
  });

  test('a carried decision is the one made alone: the first burst of one client admitted, in order, and the reads answered', async () => {
    const shared = await limiter();
    const todos = await store(shared.rider);
    const asked = await Promise.all([
      ...Array.from({ length: 5 }, () => shared.decide('reads', '192.0.2.7')),
      ...Array.from({ length: 2 }, () => todos.get(1, UNBOUNDED_WORK)),
    ]);
    const decisions = asked.slice(0, 5) as { admitted: boolean; remaining: number }[];
    assert.deepEqual(
      decisions.map((d) => [d.admitted, d.remaining]),
      [
        [true, 2],
        [true, 1],
        [true, 0],
        [false, 0],
        [false, 0],
      ],
    );
    for (const read of asked.slice(5)) assert.equal((read as { id: number }).id, 1);
    // Decided again alone, the client is still refused: the carried decisions were recorded.
    assert.equal((await shared.decide('reads', '192.0.2.7')).admitted, false);
  });

  test('a carrier cancelled by its reads’ deadline fails its reads alone; the decision it carried is decided on its own', async () => {
    const shared = await limiter();
    const todos = await store(shared.rider);
    const client = '192.0.2.9';
    await shared.decide('reads', client);
    // Another session holds the client's row: the carrier's statement waits for it.
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT * FROM rate_limits WHERE key = $1 FOR UPDATE', [
      `todo:reads:${client}`,
    ]);
    const deadline = new Deadline();
    const read = Promise.resolve(todos.get(1, { deadline, origin: undefined })).catch(
      (error: unknown) => error,
    );
    const decision = shared.decide('reads', client);
    setTimeout(() => deadline.expire(), 300);
    assert.ok((await read) instanceof DeadlinePassed, 'the read is given up at its deadline');
    await holder.query('COMMIT');
    await holder.end();
    const decided = await decision;
    assert.equal(decided.admitted, true, 'decided alone once the row is free: its second of three');
    assert.equal(decided.remaining, 1);
  });
});
