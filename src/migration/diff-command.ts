// `diff`: replays a HAR against the primary, the secondary and the candidate, writes the report
// (text on stdout, and the JSON and HTML files asked for) and exits 0, 1 or 2 (report.ts says
// when). Whatever stops the kit before a verdict (a bad option, an unreadable HAR, a target down,
// a report it cannot write) is one line on stderr and exit code 2.
import { readFile, stat, writeFile } from 'node:fs/promises';
import { stringify } from 'lossless-json';
import { integer, parseArgs, required, targetUrl, UsageError } from './args.js';
import { replay, type Targets } from './diff-run.js';
import { HarError, readHarRequests, type HarRequestRead } from './har.js';
import { htmlReport } from './html-report.js';
import { NOISE_RULES } from './noise.js';
import { buildReport, type MigrationReport } from './report.js';
import { unreachable } from './send.js';
import { textReport } from './text-report.js';

export const DIFF_USAGE = `Usage: node dist/cli.js diff --primary URL [--secondary URL] --candidate URL --har FILE
                            [--json REPORT] [--html REPORT]

Replays the requests of a HAR 1.2 file, in order, against the primary (the service as it is), the
secondary (a second copy of it, to learn the noise) and the candidate (its port), and reports every
request the candidate answers otherwise than the primary, beyond noise. The three must start from
the same state. Exit 0: no difference beyond noise; 1: differences; 2: the kit could not run, or
not every request could be sent. Guide: docs/migration.md.

Options:
  --primary URL      the service as it is
  --secondary URL    a second copy of it; without one, noise falls back on named rules
  --candidate URL    the new service
  --har FILE         the recorded requests (HAR 1.2, at most 256 MiB)
  --json REPORT      also write the report as JSON there
  --html REPORT      also write the report as a self-contained HTML page there
  --progress-every N without a terminal, one progress line every N requests (default 1000)
  --help             this text
`;

/** The largest HAR file the kit reads: it holds the whole file in memory, parsed. */
export const HAR_BYTES_MAX = 256 * 1024 * 1024;

export interface Output {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** Whether stderr is a terminal: progress then rewrites one line. */
  readonly stderrIsTerminal: boolean;
}

/** A reason the kit cannot run: one line on stderr, exit code 2. */
class CannotRun extends Error {}

interface DiffOptions {
  readonly targets: Targets;
  readonly har: string;
  readonly json: string | undefined;
  readonly html: string | undefined;
  readonly progressEvery: number;
}

function readOptions(argv: readonly string[]): DiffOptions | 'help' {
  const args = parseArgs(argv, {
    values: ['primary', 'secondary', 'candidate', 'har', 'json', 'html', 'progress-every'],
    switches: ['help'],
  });
  if (args.switches.has('help')) return 'help';
  const secondary = args.values.get('secondary');
  const every = args.values.get('progress-every');
  return {
    targets: {
      primary: targetUrl('primary', required(args, 'primary')),
      secondary: secondary === undefined ? undefined : targetUrl('secondary', secondary),
      candidate: targetUrl('candidate', required(args, 'candidate')),
    },
    har: required(args, 'har'),
    json: args.values.get('json'),
    html: args.values.get('html'),
    progressEvery: every === undefined ? 1000 : integer('progress-every', every, 1, 1e9),
  };
}

async function readRequests(file: string): Promise<HarRequestRead[]> {
  let text: string;
  try {
    const size = (await stat(file)).size;
    if (size > HAR_BYTES_MAX)
      throw new CannotRun(
        `${file} is ${size} bytes, over the ${HAR_BYTES_MAX} bytes the kit reads`,
      );
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (error instanceof CannotRun) throw error;
    throw new CannotRun(`cannot read the HAR ${file}: ${messageOf(error)}`);
  }
  try {
    return readHarRequests(text);
  } catch (error) {
    if (error instanceof HarError)
      throw new CannotRun(`${file} is not a HAR the kit can read: ${error.message}`);
    throw error;
  }
}

async function checkTargets(targets: Targets): Promise<void> {
  for (const name of ['primary', 'secondary', 'candidate'] as const) {
    const url = targets[name];
    if (url === undefined) continue;
    const problem = await unreachable(url);
    if (problem !== undefined) throw new CannotRun(`the ${name} ${url} is down: ${problem}`);
  }
}

/** Progress on stderr: one line rewritten on a terminal, else a line every `every` requests. */
function progressTo(output: Output, total: number, every: number): (done: number) => void {
  let shownAt = 0;
  return (done) => {
    if (output.stderrIsTerminal) {
      const now = Date.now();
      if (now - shownAt < 200 && done < total) return;
      shownAt = now;
      output.stderr(`\rreplayed ${done} of ${total} requests${done === total ? '\n' : ''}`);
    } else if (done % every === 0) {
      output.stderr(`replayed ${done} of ${total} requests\n`);
    }
  };
}

async function writeReports(options: DiffOptions, report: MigrationReport): Promise<void> {
  const files = [
    [options.json, () => `${stringify(report, undefined, 2) ?? ''}\n`],
    [options.html, () => htmlReport(report)],
  ] as const;
  for (const [file, render] of files) {
    if (file === undefined) continue;
    try {
      await writeFile(file, render());
    } catch (error) {
      throw new CannotRun(`cannot write the report ${file}: ${messageOf(error)}`);
    }
  }
}

/** Runs `diff` with its options; resolves with the exit code. */
export async function runDiff(argv: readonly string[], output: Output): Promise<number> {
  try {
    const options = readOptions(argv);
    if (options === 'help') {
      output.stdout(DIFF_USAGE);
      return 0;
    }
    const requests = await readRequests(options.har);
    await checkTargets(options.targets);
    if (options.targets.secondary === undefined)
      output.stderr(
        `no --secondary: noise falls back on the rules ${NOISE_RULES.map((rule) => rule.name).join(', ')} (the report says what each takes)\n`,
      );
    const result = await replay(
      options.targets,
      requests,
      progressTo(output, requests.length, options.progressEvery),
    );
    const report = buildReport(options.har, options.targets, result);
    await writeReports(options, report);
    output.stdout(textReport(report));
    if (report.exitCode === 2) output.stderr(`error: ${report.verdict}\n`);
    return report.exitCode;
  } catch (error) {
    if (error instanceof UsageError) {
      output.stderr(`error: ${error.message} (see diff --help)\n`);
      return 2;
    }
    if (error instanceof CannotRun) {
      output.stderr(`error: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}

const messageOf = (error: unknown): string =>
  error instanceof Error ? error.message : String(error);
