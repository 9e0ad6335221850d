// Background work in rounds every so often (the pruning of idempotency records and of rate-limit
// rows): never two rounds at once, the timer never keeping the process alive, and stopping waits
// for the round in progress, which sees `stopped` turn true so that it can end early.
export interface Rounds {
  /** Stops the rounds and waits for one in progress. */
  stop(): Promise<void>;
}

/** `round` must not reject: each caller says what a failed round means. */
export function startRounds(round: (stopped: () => boolean) => Promise<void>, everyMs: number): Rounds {
  let running: Promise<void> | undefined;
  let stopped = false;
  const timer = setInterval(() => {
    running ??= round(() => stopped).finally(() => (running = undefined));
  }, everyMs);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
