// Background work in rounds every so often (the pruning of idempotency records and of rate-limit
// rows): never two rounds at once, the timer never keeping the process alive, and stopping waits
// for the round in progress, which sees `stopped` turn true so that it can end early. A round that
// ends at its own bound with work left says so, and the next one comes sooner: otherwise a bound
// per round and a long interval would cap how fast a table can ever be caught up.
export interface Rounds {
  /** Stops the rounds and waits for one in progress. */
  stop(): Promise<void>;
}

/**
 * `round` must not reject: each caller says what a failed round means. It resolves true when it
 * stopped with work left; the next round then starts `catchUpMs` later instead of `everyMs`.
 */
export function startRounds(
  round: (stopped: () => boolean) => Promise<boolean | void>,
  everyMs: number,
  catchUpMs = everyMs,
): Rounds {
  let running: Promise<void> | undefined;
  let stopped = false;
  let catchUp: NodeJS.Timeout | undefined;
  const start = (): void => {
    running ??= round(() => stopped).then((behind) => {
      running = undefined;
      if (behind !== true || stopped) return;
      catchUp = setTimeout(start, catchUpMs);
      catchUp.unref();
    });
  };
  const timer = setInterval(start, everyMs);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      clearTimeout(catchUp);
      await running;
    },
  };
}
