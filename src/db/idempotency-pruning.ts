// Expired idempotency records go in the background: every so often, batches of at most
// PRUNE_BATCH_ROWS rows, one after another until a batch comes back short, so that pruning never
// holds the write lock (or a row lock) for long and never competes with requests for a whole turn.
// A round that ends at its bound of batches, the table still behind, is followed by the next one a
// second later rather than at the next interval: otherwise pruning could delete no more than
// BATCHES_PER_ROUND_MAX × PRUNE_BATCH_ROWS rows per interval (100,000 per 10 minutes, 166 a
// second), and a service taking more keyed writes than that would grow its table without end.
// A failed round (the database away, say) is logged and simply tried again at the next one.
import type { Logger } from '../observe/log.js';
import { PRUNE_BATCH_ROWS } from './idempotency-records.js';
import { startRounds, type Rounds } from './rounds.js';

/** Between rounds: often enough that expired keys do not pile up, rarely enough to cost nothing. */
const ROUND_INTERVAL_MS_MAX = 10 * 60 * 1000;
const ROUND_INTERVAL_MS_MIN = 1000;
/** A bound on one round, so that a table far behind is caught up over several rounds. */
const BATCHES_PER_ROUND_MAX = 100;

export type KeyPruning = Rounds;

export function startKeyPruning(
  prune: (expiredBeforeMs: number) => Promise<number>,
  ttlMs: number,
  log?: Logger,
): KeyPruning {
  const intervalMs = Math.max(
    ROUND_INTERVAL_MS_MIN,
    Math.min(ROUND_INTERVAL_MS_MAX, Math.floor(ttlMs / 4)),
  );
  return startRounds(
    async (stopped) => {
      try {
        for (let batch = 0; batch < BATCHES_PER_ROUND_MAX && !stopped(); batch++) {
          if ((await prune(Date.now() - ttlMs)) < PRUNE_BATCH_ROWS) return false;
        }
        // Every batch came back full: the table is still behind, and the next round comes sooner.
        return !stopped();
      } catch (error) {
        log?.warn('pruning expired idempotency keys failed; tried again later', {
          reason: error instanceof Error ? error.message : String(error),
        });
        return false;
      }
    },
    intervalMs,
    ROUND_INTERVAL_MS_MIN,
  );
}
