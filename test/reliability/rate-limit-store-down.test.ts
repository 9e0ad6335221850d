// The shared limiter's database goes away mid-load (a TCP proxy in front of PostgreSQL is cut) and
// comes back. --rate-limit-store-down decides what a request gets meanwhile: open admits it (a
// request that needs no database, a 422 here, is still answered), closed answers 503 with
// Retry-After without asking anything further. Either way no answer is a 500, the process lives,
// and the limits are back by themselves once the database is.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTestDatabase, postgresSkip } from '../support/postgres.js';
import { sendOnSchedule, type ScriptedAnswer } from '../support/scripted-client.js';
import { startServiceProcess } from '../support/service-process.js';
import { processSuiteUnless } from '../support/suite.js';
import { startTcpProxy } from '../support/tcp-proxy.js';

const skip = await postgresSkip();

/** Well above the load, so that every answer before the cut is admitted. */
const LIMIT = 'reads=1000/s:1000';
const PERIOD_MS = 10;
const CUT_AT_MS = 1_000;
const RESTORE_AT_MS = 3_000;
const DURATION_MS = 6_000;
/** After a cut, or a restore, the answers settle within this. */
const SETTLE_MS = 500;
/** A path the service answers without its database: a 422 (the id is no integer). */
const NO_DATABASE_PATH = '/todos/abc';

const summary = (answers: readonly ScriptedAnswer[]): string =>
  [
    ...new Set(
      answers.map(
        (answer) => `${answer.status}${answer.headers.ratelimit === undefined ? '' : '+RateLimit'}`,
      ),
    ),
  ].join(', ');

async function loadThroughOutage(mode: 'open' | 'closed'): Promise<{
  before: ScriptedAnswer[];
  down: ScriptedAnswer[];
  back: ScriptedAnswer[];
  all: ScriptedAnswer[];
}> {
  const database = await createTestDatabase();
  const proxy = await startTcpProxy('127.0.0.1', Number(new URL(database.url).port || 5432));
  const url = new URL(database.url);
  url.port = String(proxy.port);
  const service = await startServiceProcess([
    'todo',
    '--db',
    url.toString(),
    '--rate-limit',
    LIMIT,
    '--rate-limit-store-down',
    mode,
    '--access-log',
    'off',
  ]);
  try {
    // When the cut and the restore really happened: a loaded machine may fire their timers late,
    // and the windows below count from the events, not from the plan.
    let cutMs = Number.POSITIVE_INFINITY;
    let restoringMs = Number.POSITIVE_INFINITY;
    let restoredMs = Number.POSITIVE_INFINITY;
    const outage = (async () => {
      await sleep(CUT_AT_MS);
      proxy.cut('refuse');
      cutMs = performance.now();
      await sleep(RESTORE_AT_MS - CUT_AT_MS);
      restoringMs = performance.now();
      await proxy.restore();
      restoredMs = performance.now();
    })();
    const all = await sendOnSchedule(service.urls, NO_DATABASE_PATH, PERIOD_MS, DURATION_MS);
    await outage;
    assert.equal(
      await Promise.race([service.exited.then(() => 'exited'), sleep(10).then(() => 'running')]),
      'running',
    );
    return {
      all,
      // Answered before the cut: a request sent just before it may have been decided after it.
      before: all.filter((answer) => answer.answeredMs < cutMs),
      // Answered while it was down: a request sent just before the restore may be decided after it.
      down: all.filter(
        (answer) => answer.sentMs > cutMs + SETTLE_MS && answer.answeredMs < restoringMs,
      ),
      back: all.filter((answer) => answer.sentMs > restoredMs + 2_000),
    };
  } finally {
    await service.kill();
    await proxy.close();
    await database.drop();
  }
}

processSuiteUnless(skip, 'the shared limiter while its database is down', () => {
  for (const mode of ['open', 'closed'] as const) {
    test(`--rate-limit-store-down ${mode}: ${mode === 'open' ? 'requests are admitted without limits' : 'requests are answered 503 with Retry-After'} while it is down, and limited again once it is back`, async () => {
      const { before, down, back, all } = await loadThroughOutage(mode);
      assert.ok(!all.some((answer) => answer.status === 500), summary(all));
      assert.ok(before.length > 50 && down.length > 50 && back.length > 50);
      assert.ok(
        before.every((answer) => answer.status === 422 && answer.headers.ratelimit !== undefined),
        `before the cut: ${summary(before)}`,
      );
      if (mode === 'open') {
        assert.ok(
          down.every((answer) => answer.status === 422 && answer.headers.ratelimit === undefined),
          `while down: ${summary(down)}`,
        );
      } else {
        assert.ok(
          down.every((answer) => answer.status === 503 && answer.headers['retry-after'] === '1'),
          `while down: ${summary(down)}`,
        );
      }
      assert.ok(
        back.every((answer) => answer.status === 422 && answer.headers.ratelimit !== undefined),
        `once back: ${summary(back)}`,
      );
    });
  }
});
