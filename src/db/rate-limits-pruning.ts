// The shared limiter's own pruning (rate-limits-postgres.ts owns it; the idempotency records have
// theirs): a row whose time is past means the same as no row, so every sweep period (a quarter of
// the longest window, 250 ms to 10 s: policy.ts) a round deletes every such row. The table then
// holds at most the clients admitted within the last window plus that period, however many clients
// come and go. A round walks the table's pages in ranges, one short statement each, so that no
// statement holds many rows locked (a decision on one of them would wait for it) and none rescans
// what an earlier one passed. A failed round (the database away) is logged once, until one works.
import type { Logger } from '../observe/log.js';
import { startRounds, type Rounds } from './rounds.js';

/** `round` deletes the past rows, checking `stopped` between its statements; returns how many. */
export function startRateLimitPruning(
  round: (stopped: () => boolean) => Promise<number>,
  everyMs: number,
  log?: Logger,
): Rounds {
  let failing = false;
  return startRounds(async (stopped) => {
    try {
      await round(stopped);
      if (failing) log?.info('pruning past rate-limit rows works again');
      failing = false;
    } catch (error) {
      if (!failing)
        log?.warn('pruning past rate-limit rows failed; tried again each round', {
          reason: error instanceof Error ? error.message : String(error),
        });
      failing = true;
    }
  }, everyMs);
}
