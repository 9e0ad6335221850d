// A suite that may have to be skipped (no PostgreSQL, no browser). node:test does not count a
// skipped describe() in its closing `# skipped` line, so a run without PostgreSQL looked exactly
// like one with it. A suite that cannot run is registered as one skipped test instead, named
// after the suite and carrying the reason: the runner's skipped count then says so.
// Every suite that runs has a time limit (time-limits.ts).
import { describe, test } from 'node:test';
import { PROCESS_SUITE_TIMEOUT_MS, SUITE_TIMEOUT_MS } from './time-limits.js';

export function suiteUnless(
  skip: string | false,
  name: string,
  body: () => void,
  timeout = SUITE_TIMEOUT_MS,
): void {
  if (skip === false) describe(name, { timeout }, body);
  else test(name, { skip }, () => undefined);
}

/** The same for a suite that starts service processes or databases many times over. */
export function processSuiteUnless(skip: string | false, name: string, body: () => void): void {
  suiteUnless(skip, name, body, PROCESS_SUITE_TIMEOUT_MS);
}
