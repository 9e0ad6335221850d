// The batches a group-committing store commits, as its observer is told them: how many writes each
// held.
import assert from 'node:assert/strict';
import type { StoreObserver } from '../../src/db/store-observer.js';

/** GROUP_COMMIT_LIMITS.bytesMax, the same on both databases: what one batch may carry. */
const BATCH_BYTES_MAX = 4 * 1024 * 1024;

/** A UTF-16 length that a store counts at 3 bytes a unit: three such strings fit in one batch, four do not. */
export const LARGE = 450_000;

export interface BatchRecorder {
  readonly observer: StoreObserver;
  /** Writes per committed batch, in the order committed. */
  readonly batches: number[];
}

export function recordBatches(): BatchRecorder {
  const batches: number[] = [];
  return { observer: { batchCommitted: (writes) => batches.push(writes) }, batches };
}

/** `count` large writes, queued at once, all committed, never more than three in a batch. */
export function assertCutByBytes(batches: readonly number[], count: number): void {
  assert.ok(4 * LARGE * 3 > BATCH_BYTES_MAX && 3 * (LARGE * 3 + 64) < BATCH_BYTES_MAX);
  assert.equal(
    batches.reduce((sum, writes) => sum + writes, 0),
    count,
    `batches ${batches.join(', ')}`,
  );
  assert.ok(Math.max(...batches) <= 3, `batches ${batches.join(', ')}`);
}
