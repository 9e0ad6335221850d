// Servers under test run as child processes, so that each has its own event loop, its own core
// to compete for, and a peak memory (VmHWM) that is its own.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

const START_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 10_000;
const STDERR_KEPT_BYTES = 4096;

/**
 * Servers still running. A bench stopped by Ctrl-C or `kill` stops them as it goes, rather than
 * leave them behind to take CPU from whatever runs next.
 */
const live = new Set<ChildProcess>();
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  process.once(signal, () => {
    for (const child of live) child.kill('SIGTERM');
    process.exit(code);
  });
}
// A bench that fails part-way (an error nobody caught) leaves none behind either.
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export interface ServerProcess {
  readonly name: string;
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** The most memory the process has held so far (VmHWM), or undefined where /proc is not there. */
  peakRssBytes(): number | undefined;
  /** CPU time the process has used so far, user and system, every thread; undefined where /proc is not there. */
  cpuSeconds(): number | undefined;
  stop(): Promise<void>;
}

/** A port that was free a moment ago: the child is told to listen on it. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

export interface StartOptions {
  /** A command that runs node, such as valgrind and its options: its process is then the server's. */
  readonly wrapper?: readonly string[];
  /** Options of node itself, before the script. */
  readonly nodeOptions?: readonly string[];
  /** How long the server may take to answer (under valgrind, a minute or more). */
  readonly startTimeoutMs?: number;
  /** The server's working folder, where node writes files of its own (--perf-basic-prof does). */
  readonly cwd?: string;
  /** Variables set for the server beside this process's own (OTEL_TRACES_SAMPLER, say). */
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * Starts `node script args…` and waits until it answers HTTP on the port. If it exits first, the
 * promise rejects with the end of what it wrote to stderr, which says why (bad --db, say).
 */
export async function startServerProcess(
  name: string,
  script: URL,
  args: readonly string[],
  port: number,
  options: StartOptions = {},
): Promise<ServerProcess> {
  const command = [
    ...(options.wrapper ?? []),
    process.execPath,
    ...(options.nodeOptions ?? []),
    fileURLToPath(script),
    ...args,
  ];
  const child = spawn(command[0] as string, command.slice(1), {
    stdio: ['ignore', 'ignore', 'pipe'],
    cwd: options.cwd,
    env: options.env === undefined ? process.env : { ...process.env, ...options.env },
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_KEPT_BYTES);
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  const url = `http://127.0.0.1:${port}`;
  const startTimeoutMs = options.startTimeoutMs ?? START_TIMEOUT_MS;
  const deadline = Date.now() + startTimeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `${name} exited at start (${child.exitCode ?? child.signalCode}): ${lastLine(stderr)}`,
      );
    }
    if (await answers(url)) break;
    if (Date.now() > deadline) {
      await stopChild(child, exited);
      throw new Error(
        `${name} did not answer on ${url} within ${startTimeoutMs} ms: ${lastLine(stderr)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const pid = child.pid as number;
  return {
    name,
    url,
    port,
    pid,
    peakRssBytes: () => readPeakRss(pid),
    cpuSeconds: () => readCpuSeconds(pid),
    stop: () => stopChild(child, exited),
  };
}

function lastLine(text: string): string {
  const lines = text.trim().split('\n');
  return lines[lines.length - 1] ?? '(nothing on stderr)';
}

function answers(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = request(`${url}/healthz`, { agent: false }, (res) => {
      res.resume();
      resolve(true);
    });
    probe.setTimeout(1000, () => probe.destroy());
    probe.once('error', () => resolve(false));
    probe.end();
  });
}

async function stopChild(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

function readPeakRss(pid: number): number | undefined {
  try {
    const match = /^VmHWM:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? undefined : Number(match[1]) * 1024;
  } catch {
    return undefined;
  }
}

/** Linux reports CPU time in clock ticks of USER_HZ, which is 100 on every architecture Node runs on. */
const TICKS_PER_SECOND = 100;

function readCpuSeconds(pid: number): number | undefined {
  try {
    // Fields after the command name (which may hold spaces, so it is skipped by its closing paren):
    // utime and stime are the 14th and 15th fields of the line, the 12th and 13th after ") ".
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}
