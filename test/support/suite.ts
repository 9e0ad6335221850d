// A suite that may have to be skipped (no PostgreSQL, no browser). node:test does not count a
// skipped describe() in its closing `# skipped` line, so a run without PostgreSQL looked exactly
// like one with it. A suite that cannot run is registered as one skipped test instead, named
// after the suite and carrying the reason: the runner's skipped count then says so.
import { describe, test } from 'node:test';

export function suiteUnless(skip: string | false, name: string, body: () => void): void {
  if (skip === false) describe(name, body);
  else test(name, { skip }, () => undefined);
}
