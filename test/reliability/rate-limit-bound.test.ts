// The bound of the rate limits, counted exactly: a client that sends at five times its rate for
// 10 s is admitted at most burst + rate × T, T being the time from its first request sent to its
// last answer received (every decision was taken within it), with no tolerance. Against one
// instance (the limiter in process) and against four instances on one PostgreSQL database, where
// a limiter per process would admit four times as many: the shared one admits what one would.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { createTestDatabase, postgresSkip } from '../support/postgres.js';
import { sendOnSchedule, type ScriptedAnswer } from '../support/scripted-client.js';
import { startServiceProcess } from '../support/service-process.js';
import { processSuiteUnless } from '../support/suite.js';

const RATE_PER_SECOND = 20;
const BURST = 10;
const LIMIT = `reads=${RATE_PER_SECOND}/s:${BURST}`;
/** Five times the rate: one request every 10 ms. */
const PERIOD_MS = 10;
const DURATION_MS = 10_000;

const skip = await postgresSkip();

/** Admitted, and the exact bound over the span in which they were decided. */
function count(answers: readonly ScriptedAnswer[]): {
  admitted: number;
  bound: number;
  spanMs: number;
} {
  const statuses = new Set(answers.map((answer) => answer.status));
  assert.deepEqual(
    [...statuses].filter((status) => status !== 200 && status !== 429),
    [],
    'every answer is 200 or 429',
  );
  const admitted = answers.filter((answer) => answer.status === 200).length;
  const spanMs =
    Math.max(...answers.map((answer) => answer.answeredMs)) -
    Math.min(...answers.map((answer) => answer.sentMs));
  return { admitted, bound: Math.floor(BURST + (RATE_PER_SECOND * spanMs) / 1000), spanMs };
}

/** The bound, and that the limiter is not stricter than it says either (so that the bound is not met by refusing everything). */
function assertBound(t: TestContext, answers: readonly ScriptedAnswer[]): void {
  const { admitted, bound, spanMs } = count(answers);
  t.diagnostic(
    `${answers.length} sent, ${admitted} admitted in ${spanMs.toFixed(1)} ms, bound ${bound}`,
  );
  assert.ok(
    admitted <= bound,
    `admitted ${admitted} in ${spanMs.toFixed(1)} ms: more than burst + rate × T = ${bound}`,
  );
  const scheduled = BURST + (RATE_PER_SECOND * DURATION_MS) / 1000;
  // A loaded machine delays some requests past their slot: most of the allowance, not all of it.
  assert.ok(
    admitted >= 0.9 * scheduled,
    `admitted ${admitted}, far fewer than the ${scheduled} the limit allows over the schedule`,
  );
}

test('one instance: a client at five times its rate for 10 s is admitted at most burst + rate × T', async (t) => {
  const service = await startServiceProcess([
    'todo',
    '--db',
    'memory',
    '--rate-limit',
    LIMIT,
    '--access-log',
    'off',
  ]);
  try {
    assertBound(t, await sendOnSchedule(service.urls, '/todos/1', PERIOD_MS, DURATION_MS));
  } finally {
    await service.kill();
  }
});

processSuiteUnless(skip, 'four instances on one PostgreSQL database', () => {
  test('a client at five times its rate for 10 s, spread over four instances, is admitted at most burst + rate × T', async (t) => {
    const database = await createTestDatabase();
    const args = ['todo', '--db', database.url, '--rate-limit', LIMIT, '--access-log', 'off'];
    // Started together, so that they also race to migrate the limiter's table.
    const instances = await Promise.all(Array.from({ length: 4 }, () => startServiceProcess(args)));
    try {
      assertBound(
        t,
        await sendOnSchedule(
          instances.map((instance) => instance.urls[0] as string),
          '/todos/1',
          PERIOD_MS,
          DURATION_MS,
        ),
      );
    } finally {
      await Promise.all(instances.map((instance) => instance.kill()));
      await database.drop();
    }
  });
});
