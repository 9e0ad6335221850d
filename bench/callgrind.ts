// A server run under valgrind's callgrind, which counts the instructions the process executes in
// user space: every thread (node's main thread, V8's helper threads, libuv's pool, our SQLite
// writer thread), each into its own file (--separate-threads=yes), the kernel's share not at all.
// The count is zeroed before a measured stretch and dumped after it (callgrind_control -z / -d);
// a dump's instructions are the sum of its threads' files.
import { execFile, execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, startServerProcess, type ServerProcess } from './processes.js';

const run = promisify(execFile);

/** Under callgrind a server starts 50 to 100 times slower than natively. */
const START_TIMEOUT_MS = 180_000;
const DUMP_WAIT_MS = 60_000;

export interface Dump {
  /** Every thread's instructions. */
  readonly total: number;
  /** The main thread's (the event loop's). */
  readonly mainThread: number;
  /** The dump's files, one per thread, the main thread's first. */
  readonly files: readonly string[];
}

export interface CallgrindServer extends ServerProcess {
  /** Starts instrumenting (the server starts without, so that warming it up is quicker). */
  instrument(): Promise<void>;
  /** Sets every thread's count to zero. */
  zero(): Promise<void>;
  /** Writes every thread's count since the last zero, and reads the totals. */
  dump(): Promise<Dump>;
  /** Where node listed the code it compiled (--perf-basic-prof), for naming JavaScript functions; undefined without it. */
  readonly perfMap: string | undefined;
}

export interface CallgrindOptions {
  /** Folder for callgrind's files and valgrind's log. */
  readonly dir: string;
  /**
   * For a breakdown by function: callgrind records each instruction's address, and node lists the
   * code it compiles (--perf-basic-prof), so that compiled JavaScript can be named. Not for the
   * judged counts: the list is written as code is compiled.
   */
  readonly nameCompiledCode?: boolean;
  /** Variables set for the server beside the bench's own. */
  readonly env?: Readonly<Record<string, string>>;
}

/** The tools a count needs, or what is missing. */
export function callgrindMissing(): string | undefined {
  for (const tool of ['valgrind', 'callgrind_control']) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      return `${tool} is missing (Debian: apt-get install -y valgrind)`;
    }
  }
  return undefined;
}

export async function startUnderCallgrind(
  name: string,
  script: URL,
  args: (port: number) => readonly string[],
  options: CallgrindOptions,
): Promise<CallgrindServer> {
  const port = await freePort();
  const prefix = join(options.dir, name);
  const wrapper = [
    'valgrind',
    '--tool=callgrind',
    '--separate-threads=yes',
    '--trace-children=no',
    // Warm-ups run without instrumentation, several times faster: counting starts at instrument().
    '--instr-atstart=no',
    `--callgrind-out-file=${prefix}.%p`,
    `--log-file=${prefix}.valgrind.log`,
    ...(options.nameCompiledCode === true ? ['--dump-instr=yes'] : []),
  ];
  const nodeOptions = options.nameCompiledCode === true ? ['--perf-basic-prof'] : [];
  const server = await startServerProcess(name, script, args(port), port, {
    wrapper,
    nodeOptions,
    startTimeoutMs: START_TIMEOUT_MS,
    cwd: options.dir,
    env: options.env,
  });
  let dumps = 0;
  const control = async (flag: string): Promise<void> => {
    await run('callgrind_control', [flag, String(server.pid)]);
  };
  const perfMap = options.nameCompiledCode === true ? `/tmp/perf-${server.pid}.map` : undefined;
  return {
    ...server,
    perfMap: perfMap === undefined ? undefined : `${prefix}.perf.map`,
    instrument: () => control('--instr=on'),
    zero: () => control('-z'),
    async dump() {
      await control('-d');
      dumps += 1;
      const dump = await readDump(options.dir, `${name}.${server.pid}.${dumps}-`);
      // The list grows as node compiles: the copy beside the dump names what ran before it.
      if (perfMap !== undefined && existsSync(perfMap)) copyFileSync(perfMap, `${prefix}.perf.map`);
      return dump;
    },
    async stop() {
      await server.stop();
      if (perfMap !== undefined) rmSync(perfMap, { force: true });
    },
  };
}

/** The files of one dump, `<stem>NN` for thread NN, once each is written whole (its last line is `totals:`). */
async function readDump(dir: string, stem: string): Promise<Dump> {
  const deadline = Date.now() + DUMP_WAIT_MS;
  for (;;) {
    const files = readdirSync(dir)
      .filter((file) => file.startsWith(stem) && /^\d+$/.test(file.slice(stem.length)))
      .sort()
      .map((file) => join(dir, file));
    const summaries = files.map((file) => summaryOf(readFileSync(file, 'utf8')));
    if (files.length > 0 && summaries.every((s) => s !== undefined)) {
      return {
        total: summaries.reduce((sum, n) => sum + n, 0),
        mainThread: summaries[0] as number,
        files,
      };
    }
    if (Date.now() > deadline)
      throw new Error(
        `callgrind wrote no whole dump ${stem}NN in ${dir} within ${DUMP_WAIT_MS / 1000} s`,
      );
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** A file's `summary:` count, once the file is complete. */
export function summaryOf(text: string): number | undefined {
  if (!/^totals: \d+\s*$/m.test(text)) return undefined;
  const match = /^summary: (\d+)$/m.exec(text);
  return match === null ? undefined : Number(match[1]);
}
