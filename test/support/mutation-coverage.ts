// Only for `npm run mutation` (StrykerJS), preloaded into every test process and, through the
// inherited execArgv, into its worker threads. Stryker learns which tests cover a mutant from a
// global that each thread keeps for itself, and its runner reads only the main thread's, so the
// code that runs in the group-commit writer threads would look uncovered and never be tested.
// Each worker writes what it covered to a file as it exits; the main thread folds those files
// into its own record before Stryker's hook (which runs after this exit listener) writes it out.
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMainThread, threadId } from 'node:worker_threads';

type Hits = Record<string, number>;
interface StrykerGlobal {
  mutantCoverage?: { static: Hits; perTest: Record<string, Hits> };
}

const namespace = process.env.STRYKER_NAMESPACE ?? '__stryker__';
const prefix = `stryker-worker-coverage-${process.pid}-`;
const strykerGlobal = (): StrykerGlobal | undefined =>
  (globalThis as Record<string, unknown>)[namespace] as StrykerGlobal | undefined;

// Coverage matters only in the dry run, where Stryker maps mutants to tests.
if (process.env.STRYKER_DRY_RUN === 'true') {
  if (isMainThread) process.prependListener('exit', foldWorkerCoverage);
  else
    process.on('exit', () =>
      writeFileSync(
        join(tmpdir(), `${prefix}${threadId}.json`),
        JSON.stringify(strykerGlobal()?.mutantCoverage?.static ?? {}),
      ),
    );
}

function foldWorkerCoverage(): void {
  const own = strykerGlobal();
  if (own === undefined) return;
  own.mutantCoverage ??= { static: {}, perTest: {} };
  for (const name of readdirSync(tmpdir()).filter((n) => n.startsWith(prefix))) {
    const path = join(tmpdir(), name);
    const hits = JSON.parse(readFileSync(path, 'utf8')) as Hits;
    for (const [id, count] of Object.entries(hits))
      own.mutantCoverage.static[id] = (own.mutantCoverage.static[id] ?? 0) + count;
    rmSync(path, { force: true });
  }
}
