// A service as a real OS process: the compiled CLI (which `npm test` builds into .build/), started
// with --port 0. The process logs the address it took, one JSON line per service, and that is
// how the test learns its URLs: no guessing of free ports.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../src/cli.js', import.meta.url));
const START_TIMEOUT_MS = 15_000;

export interface ServiceProcess {
  readonly pid: number;
  /** One URL per service started, in the order of the CLI (todo before bank). */
  readonly urls: readonly string[];
  /** Everything the process wrote so far, stdout and stderr. */
  output(): string;
  /** Resolves once a log line with this `msg` has been written. */
  logged(msg: string): Promise<void>;
  /** Sends the signal and waits for the process to end. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Resolves with the exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>;
}

/** Who the process runs as, when not as the test's own user (a test run as root needs this to meet file permissions). */
export interface RunAs {
  readonly uid: number;
  readonly gid: number;
}

export interface ProcessOptions extends Partial<RunAs> {
  /** The soft limit on open files the process starts with (the shell's `ulimit -n`). */
  readonly openFilesMax?: number;
  /** The compiled CLI to run, when not this build's own (for example a copy that another user can reach). */
  readonly cli?: string;
  /** Variables added to the test's own environment. */
  readonly env?: NodeJS.ProcessEnv;
  /** Node's own options, before the script (--import …). */
  readonly nodeOptions?: readonly string[];
}

export function runCli(args: readonly string[], options: ProcessOptions = {}): ChildProcess {
  const { openFilesMax, cli = CLI, env, nodeOptions = [], ...runAs } = options;
  const spawnOptions: SpawnOptions = {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...runAs,
    ...(env === undefined ? {} : { env: { ...process.env, ...env } }),
  };
  if (openFilesMax === undefined)
    return spawn(process.execPath, [...nodeOptions, cli, ...args], spawnOptions);
  // exec keeps the process id, so that signals reach node itself and not the shell.
  const script = `ulimit -n ${openFilesMax} && exec "$0" "$@"`;
  return spawn('sh', ['-c', script, process.execPath, cli, ...args], spawnOptions);
}

/** Starts the CLI and resolves once `expectedServices` services have logged where they listen. */
export function startServiceProcess(
  args: readonly string[],
  expectedServices = 1,
  options: ProcessOptions = {},
): Promise<ServiceProcess> {
  return whenListening(
    runCli(['--port', '0', ...args], options),
    expectedServices,
    START_TIMEOUT_MS,
  );
}

const REPOSITORY = fileURLToPath(new URL('../../..', import.meta.url));
/** `npm start` compiles the project first when its build is not up to date. */
const NPM_START_TIMEOUT_MS = 120_000;

/** `npm start -- args…` in the repository (or in `folder`), as an operator runs it: the handle's pid is npm's. */
export function startWithNpm(
  args: readonly string[],
  expectedServices = 1,
  folder = REPOSITORY,
): Promise<ServiceProcess> {
  const child = spawn('npm', ['start', '--silent', '--', '--port', '0', ...args], {
    cwd: folder,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return whenListening(child, expectedServices, NPM_START_TIMEOUT_MS);
}

function whenListening(
  child: ChildProcess,
  expectedServices: number,
  timeoutMs: number,
): Promise<ServiceProcess> {
  let output = '';
  let pending = '';
  const urls: string[] = [];
  const messages = new Set<string>();
  const awaited = new Map<string, () => void>();
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );

  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`service did not start within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    const handle: ServiceProcess = {
      pid: child.pid ?? -1,
      urls,
      output: () => output,
      logged: (msg) =>
        messages.has(msg) ? Promise.resolve() : new Promise((resolve) => awaited.set(msg, resolve)),
      exited,
      async kill(signal = 'SIGTERM') {
        if (child.exitCode === null && child.signalCode === null) child.kill(signal);
        await exited;
      },
    };
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      output += text;
      pending += text;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        const msg = messageOf(line);
        if (msg !== undefined) {
          messages.add(msg);
          awaited.get(msg)?.();
        }
        const url = listeningUrl(line);
        if (url === undefined) continue;
        urls.push(url);
        if (urls.length === expectedServices) {
          clearTimeout(timer);
          resolve(handle);
        }
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code} before it listened:\n${output}`));
    });
  });
}

function messageOf(line: string): string | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const { msg } = JSON.parse(line) as { msg?: unknown };
    return typeof msg === 'string' ? msg : undefined;
  } catch {
    return undefined;
  }
}

function listeningUrl(line: string): string | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const entry: unknown = JSON.parse(line);
    if (typeof entry !== 'object' || entry === null) return undefined;
    const { msg, url } = entry as { msg?: unknown; url?: unknown };
    return msg === 'listening' && typeof url === 'string' ? url : undefined;
  } catch {
    return undefined;
  }
}
