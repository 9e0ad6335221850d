// Group commit on PostgreSQL (src/db/postgres/group-commit.ts) with a scripted `decide` in place of
// the stored function: which writes are tried again alone when a batch fails, and which are not.
// The same rules against a real server are in the PostgreSQL store tests.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { postgresGroupCommit } from '../../src/db/postgres/group-commit.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';
import { UNBOUNDED_WORK } from '../../src/common/work.js';

/** A decide that fails any batch holding a negative value, with `code`, and records every call. */
function scripted(code: string) {
  const calls: number[][] = [];
  const decide = (ops: readonly number[]): Promise<readonly number[]> => {
    calls.push([...ops]);
    if (ops.some((op) => op < 0))
      return Promise.reject(Object.assign(new Error(`refused (${code})`), { code }));
    return Promise.resolve(ops.map((op) => op * 10));
  };
  return { calls, commit: postgresGroupCommit<number, number>({ decide, sizeOf: () => 8 }) };
}

describe('group commit on PostgreSQL when a batch fails', { timeout: SUITE_TIMEOUT_MS }, () => {
  test('a lone write that fails on its own data is tried once, and fails with its error', async () => {
    const { calls, commit } = scripted('22003');
    await assert.rejects(
      commit.write(-1, UNBOUNDED_WORK),
      (error: unknown) => (error as { code?: unknown }).code === '22003',
    );
    assert.deepEqual(calls, [[-1]]);
    await commit.close();
  });

  for (const code of ['22003', '23505', 'P0001']) {
    test(`in a batch, a write whose data fails (${code}) fails alone: each write is tried again alone, in order`, async () => {
      const { calls, commit } = scripted(code);
      const outcomes = await Promise.allSettled([
        commit.write(1, UNBOUNDED_WORK),
        commit.write(-2, UNBOUNDED_WORK),
        commit.write(3, UNBOUNDED_WORK),
      ]);
      assert.deepEqual(
        outcomes.map((o) =>
          o.status === 'fulfilled' ? o.value : (o.reason as { code?: unknown }).code,
        ),
        [10, code, 30],
      );
      assert.deepEqual(calls, [[1, -2, 3], [1], [-2], [3]]);
      await commit.close();
    });
  }

  test('a batch that fails for another reason (the server went away) fails every write, and none is tried again', async () => {
    const { calls, commit } = scripted('57P01');
    const outcomes = await Promise.allSettled([
      commit.write(1, UNBOUNDED_WORK),
      commit.write(-2, UNBOUNDED_WORK),
      commit.write(3, UNBOUNDED_WORK),
    ]);
    assert.deepEqual(
      outcomes.map((o) =>
        o.status === 'rejected' ? (o.reason as { code?: unknown }).code : o.status,
      ),
      ['57P01', '57P01', '57P01'],
    );
    assert.deepEqual(calls, [[1, -2, 3]]);
    await commit.close();
  });
});
