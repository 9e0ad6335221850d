// The shell examples of the README and docs/, run as a reader would run them. A reader copies an
// example into a terminal where the services were started as the text says; so does this runner,
// in a fresh folder per document, and it compares what the example prints with the text.
//
// How a document writes its examples (docs/testing.md says it for writers):
//   ```sh          an example: run on its own in a fresh bash, it must exit 0 and print exactly
//                  the ```text block that follows it (no block: nothing at all);
//   ```sh server   services (or the migration kit's recording proxy, `record`) started as the
//                  text says: every line runs in order and the last one, the services, keeps
//                  running in the background until a later server block needs one of its ports
//                  or the document ends (then SIGTERM, and it must exit 0);
//   ```sh suite    `npm test` itself: the suite these examples run in.
// Every document runs in its own empty folder, so `./data/` starts empty there, as in a fresh
// clone.
//
// What the runner changes in a script, and changes back in what it prints:
//   - ports 8000 to 8009 (examples assume the to-do service on 8000 and the bank on 8001) become
//     free ports, so that examples never meet services a developer has running; services started
//     without --port get --port with the free port in place of their default;
//   - the database name todo_bank (docs/operating.md creates it with createdb) gets a suffix of
//     its own, and the runner drops it at the end;
//   - `npm ci && ` is left out (the suite runs in an installed tree), and `npm start [-- ARGS]`
//     runs `node dist/cli.js [ARGS]`, where dist/ is this test build's compiled src/: what
//     `npm start` runs once it has compiled.
// What varies from run to run is masked on both sides before comparing, and nothing else: request
// ids that are UUIDs, dates, log times, process ids, host names and durations.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPOSITORY = fileURLToPath(new URL('../../..', import.meta.url));
/** The compiled src/ of this test build, which a document's folder links as dist/. */
const BUILT_SRC = fileURLToPath(new URL('../../src', import.meta.url));

const EXAMPLE_TIMEOUT_MS = 20_000;
const START_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 15_000;

export type ExampleKind = 'run' | 'server' | 'suite';

export interface Example {
  /** The document, relative to the repository (README.md, docs/operating.md). */
  readonly file: string;
  /** 1-based line of the example's opening fence. */
  readonly line: number;
  readonly kind: ExampleKind;
  readonly script: string;
  /** The ```text block right after a run example: undefined when there is none. */
  readonly expected: string | undefined;
  /** 0-based lines of the text block's fences, for the recorder. */
  readonly expectedFences: { readonly open: number; readonly close: number } | undefined;
  /** 0-based line of the example's closing fence. */
  readonly closeLine: number;
}

export interface ParsedDocument {
  readonly examples: readonly Example[];
  /** Shell blocks the runner cannot run, each said in one line. */
  readonly problems: readonly string[];
}

/** README.md and every Markdown file under docs/, relative to the repository, sorted. */
export function documentFiles(): string[] {
  const docs = readdirSync(join(REPOSITORY, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs.sort()];
}

const SHELL_LANGUAGES = new Set(['sh', 'bash', 'shell', 'console', 'zsh', 'shell-session']);
const KINDS: Readonly<Record<string, ExampleKind>> = {
  '': 'run',
  server: 'server',
  suite: 'suite',
};

interface Fence {
  readonly info: string;
  readonly open: number;
  readonly close: number;
  readonly body: string;
}

function fencesOf(lines: readonly string[]): Fence[] {
  const fences: Fence[] = [];
  for (let i = 0; i < lines.length; i++) {
    const opening = /^(`{3,})\s*(.*)$/.exec(lines[i] as string);
    if (opening === null) continue;
    const ticks = opening[1] as string;
    let close = i + 1;
    while (close < lines.length && !new RegExp(`^${ticks}\\s*$`).test(lines[close] as string))
      close++;
    fences.push({
      info: (opening[2] as string).trim(),
      open: i,
      close,
      body: lines.slice(i + 1, close).join('\n'),
    });
    i = close;
  }
  return fences;
}

/** The examples of one document, and the shell blocks that are not examples the runner knows. */
export function parseDocument(file: string, text: string): ParsedDocument {
  const lines = text.split('\n');
  const fences = fencesOf(lines);
  const examples: Example[] = [];
  const problems: string[] = [];
  fences.forEach((fence, index) => {
    const [language = '', ...words] = fence.info.split(/\s+/);
    if (!SHELL_LANGUAGES.has(language)) return;
    const where = `${file}:${fence.open + 1}`;
    if (language !== 'sh') {
      problems.push(`${where}: a shell example is written \`\`\`sh, not \`\`\`${language}`);
      return;
    }
    const word = words.join(' ');
    const kind = KINDS[word];
    if (kind === undefined) {
      problems.push(`${where}: \`\`\`sh ${word} is none of sh, sh server, sh suite`);
      return;
    }
    const next = fences[index + 1];
    const followed =
      next !== undefined &&
      next.info === 'text' &&
      lines.slice(fence.close + 1, next.open).every((line) => line.trim() === '');
    if (followed && kind !== 'run')
      problems.push(`${where}: only a plain \`\`\`sh example has an expected output`);
    if (kind === 'suite' && !/^(?:[A-Z_]+=\S+\s+)*npm test$/.test(fence.body.trim())) {
      problems.push(
        `${where}: a suite block holds \`npm test\` alone, not ${JSON.stringify(fence.body)}`,
      );
    }
    examples.push({
      file,
      line: fence.open + 1,
      kind,
      script: fence.body,
      expected: followed ? next.body : undefined,
      expectedFences: followed ? { open: next.open, close: next.close } : undefined,
      closeLine: fence.close,
    });
  });
  return { examples, problems };
}

/** The examples of a document of the repository. */
export function readDocument(file: string): ParsedDocument {
  return parseDocument(file, readFileSync(join(REPOSITORY, file), 'utf8'));
}

/** Every `npm run NAME` a document names, in blocks or in prose. */
export function npmScriptsNamed(text: string): string[] {
  return [...text.matchAll(/\bnpm run ([\w:.-]+)/g)].map((match) => match[1] as string);
}

const MASKS: readonly (readonly [RegExp, string])[] = [
  [/^(X-Request-Id: )[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/gim, '$1<uuid>'],
  [/("requestId":")[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"/g, '$1<uuid>"'],
  [/^(Date: )\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT$/gim, '$1<date>'],
  [/("time":)\d+/g, '$1<time>'],
  [/("pid":)\d+/g, '$1<pid>'],
  [/("hostname":)"[^"]*"/g, '$1<hostname>'],
  [/("durationMs":)\d+(?:\.\d+)?/g, '$1<duration>'],
];

/** Text as a document shows it: line ends as LF, no spaces at the end of a line, no trailing blank lines. */
export function asShown(text: string): string {
  return text
    .replace(/\r\n/g, '\n')
    .replace(/[ \t]+$/gm, '')
    .replace(/\n+$/, '');
}

/** Text as compared: as shown, and what varies masked. */
export function normalise(text: string): string {
  let result = asShown(text);
  for (const [pattern, replacement] of MASKS) result = result.replace(pattern, replacement);
  return result;
}

/** The ports examples name (8000 to 8009), each with a free port of this machine in its place. */
async function freePorts(): Promise<Map<number, number>> {
  for (let tries = 0; tries < 50; tries++) {
    const base = 10_000 + 10 * Math.floor(Math.random() * 2_000);
    const ports = Array.from({ length: 10 }, (_, i) => base + i);
    if ((await Promise.all(ports.map(isFree))).every(Boolean))
      return new Map(ports.map((port, i) => [8000 + i, port]));
  }
  throw new Error('found no ten free ports in a row');
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether an example needs a PostgreSQL server at 127.0.0.1:5432. */
export function needsPostgres(script: string): boolean {
  return /\b(?:createdb|dropdb|psql)\b|:5432\b/.test(script);
}

/** The ports (as the document names them) that the services of a command listen on. */
function servicePorts(command: string): number[] {
  const words = command.split(/\s+/);
  const cli = words.indexOf('dist/cli.js');
  if (cli < 0)
    throw new Error(
      `a server block ends with the services (npm start or node dist/cli.js), not ${JSON.stringify(command)}`,
    );
  const args = words.slice(cli + 1);
  const portArg = args.indexOf('--port');
  // The migration kit's recording proxy (docs/migration.md) listens on its --port alone.
  if (args[0] === 'record') return [Number(args[portArg + 1])];
  const service = args.find((arg) => arg === 'all' || arg === 'todo' || arg === 'bank') ?? 'all';
  const port = portArg >= 0 ? Number(args[portArg + 1]) : service === 'bank' ? 8001 : 8000;
  return service === 'all' ? [port, port + 1] : [port];
}

interface RunningServer {
  readonly example: Example;
  readonly ports: readonly number[];
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  output: string;
}

export interface RunResult {
  readonly code: number | null;
  /** What the script printed, stdout and stderr in order, with ports and names as the document writes them. */
  readonly output: string;
}

/**
 * One document's examples in their own folder, with their own ports and database names. Server
 * blocks start services; run examples run against them. `close()` stops them and cleans up.
 */
export class DocSession {
  private readonly folder = mkdtempSync(join(tmpdir(), 'doc-examples-'));
  private readonly servers: RunningServer[] = [];
  private readonly databases = new Map<string, string>();
  private readonly problems: string[] = [];

  private constructor(private readonly ports: Map<number, number>) {
    symlinkSync(BUILT_SRC, join(this.folder, 'dist'));
  }

  static async open(): Promise<DocSession> {
    return new DocSession(await freePorts());
  }

  /** The script as it runs here: ports, database names and npm commands replaced. */
  private prepare(script: string): string {
    return withoutNpm(script)
      .replace(/\b80(0\d)\b/g, (port) => String(this.ports.get(Number(port)) ?? port))
      .replace(/\btodo_bank\b/g, () => this.databaseName());
  }

  private databaseName(): string {
    let name = this.databases.get('todo_bank');
    if (name === undefined) {
      name = `todo_bank_${process.pid}_${randomBytes(4).toString('hex')}`;
      this.databases.set('todo_bank', name);
    }
    return name;
  }

  /** What a script printed, with the ports and names the document wrote. */
  private restore(output: string): string {
    let result = output;
    for (const [documented, used] of this.ports)
      result = result.replace(new RegExp(`\\b${used}\\b`, 'g'), String(documented));
    for (const [documented, used] of this.databases) result = result.split(used).join(documented);
    return result;
  }

  private environment(): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {};
    for (const [name, value] of Object.entries(process.env))
      if (!name.startsWith('SVC_')) env[name] = value;
    return env;
  }

  private spawnBash(script: string): ChildProcess {
    return spawn('bash', ['-c', `exec 2>&1\n${script}`], {
      cwd: this.folder,
      env: this.environment(),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
  }

  /** Runs a run example to its end and gives back what it printed. */
  async run(example: Example): Promise<RunResult> {
    const child = this.spawnBash(this.prepare(example.script));
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const timer = setTimeout(() => killGroup(child, 'SIGKILL'), EXAMPLE_TIMEOUT_MS);
    const code = await new Promise<number | null>((resolve) =>
      child.once('close', (exitCode) => resolve(exitCode)),
    );
    clearTimeout(timer);
    return { code, output: this.restore(output) };
  }

  /** Starts a server block, once the services it replaces have stopped; resolves once they all listen. */
  async start(example: Example): Promise<void> {
    const lines = commandLines(example.script);
    const last = lines.pop();
    if (last === undefined)
      throw new Error(`${example.file}:${example.line}: an empty server block`);
    const ports = servicePorts(withoutNpm(last));
    // Without --port the services would take 8000 or 8001 themselves: they get the free port in its
    // place.
    const command = this.prepare(
      /\s--port\s/.test(last) ? last : `${withoutNpm(last)} --port ${ports[0]}`,
    );
    for (const server of this.servers.filter((running) =>
      running.ports.some((port) => ports.includes(port)),
    ))
      await this.stop(server);
    // exec: the shell becomes the services, so that SIGTERM reaches them and their exit code is
    // theirs.
    const script = [
      ...lines.map((line) => this.prepare(line)),
      command.replace(/^((?:\w+=\S*\s+)*)/, '$1exec '),
    ].join('\n');
    const child = this.spawnBash(script);
    const server: RunningServer = {
      example,
      ports,
      child,
      output: '',
      exited: new Promise((resolve) => child.once('close', (code) => resolve(code))),
    };
    child.stdout?.on('data', (chunk: Buffer) => (server.output += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (server.output += chunk.toString('utf8')));
    this.servers.push(server);
    const deadline = Date.now() + START_TIMEOUT_MS;
    let ended = false;
    void server.exited.then(() => (ended = true));
    for (const port of ports) {
      const used = this.ports.get(port) ?? port;
      while (!(await accepts(used))) {
        if (ended)
          throw new Error(
            `${example.file}:${example.line}: the services ended before they listened on ${port}:\n${this.restore(server.output)}`,
          );
        if (Date.now() > deadline)
          throw new Error(
            `${example.file}:${example.line}: nothing listened on ${port} within ${START_TIMEOUT_MS} ms:\n${this.restore(server.output)}`,
          );
        await sleep(50);
      }
    }
  }

  /** SIGTERM to a server block's services; a block that does not exit 0 is noted for close(). */
  private async stop(server: RunningServer): Promise<void> {
    this.servers.splice(this.servers.indexOf(server), 1);
    killGroup(server.child, 'SIGTERM');
    const timer = setTimeout(() => killGroup(server.child, 'SIGKILL'), STOP_TIMEOUT_MS);
    const code = await server.exited;
    clearTimeout(timer);
    if (code !== 0) {
      this.problems.push(
        `${server.example.file}:${server.example.line}: the services exited with ${code} on SIGTERM:\n${this.restore(server.output)}`,
      );
    }
  }

  /** The ports of the services running now, as the document names them. */
  runningPorts(): number[] {
    return this.servers.flatMap((server) => server.ports);
  }

  /** Stops every server, drops the databases the document created, removes the folder; throws what went wrong. */
  async close(): Promise<void> {
    while (this.servers.length > 0) await this.stop(this.servers[0] as RunningServer);
    for (const name of this.databases.values()) {
      const dropped = await this.run({
        file: '',
        line: 0,
        kind: 'run',
        script: `dropdb --if-exists --force -h 127.0.0.1 -U postgres ${name}`,
        expected: undefined,
        expectedFences: undefined,
        closeLine: 0,
      });
      if (dropped.code !== 0) this.problems.push(`could not drop ${name}: ${dropped.output}`);
    }
    rmSync(this.folder, { recursive: true, force: true });
    if (this.problems.length > 0) throw new Error(this.problems.join('\n'));
  }
}

function commandLines(script: string): string[] {
  return script.split('\n').filter((line) => line.trim() !== '' && !line.trim().startsWith('#'));
}

/** The ports (as the document names them) of the services a server block starts. */
export function serverBlockPorts(script: string): number[] {
  return servicePorts(withoutNpm(commandLines(script).at(-1) ?? ''));
}

/** `npm ci && npm start -- ARGS` as the runner runs it: `node dist/cli.js ARGS`. */
function withoutNpm(script: string): string {
  return script
    .replace(/^npm ci && /gm, '')
    .replace(/\bnpm start(?: --)?(?=\s|$)/g, 'node dist/cli.js');
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // The group is gone already.
  }
}

/** Why PostgreSQL examples cannot run here, or undefined when they can. */
export async function postgresProblem(): Promise<string | undefined> {
  const probe = await DocSession.open();
  try {
    const result = await probe.run({
      file: '',
      line: 0,
      kind: 'run',
      script: 'pg_isready -q -h 127.0.0.1 -p 5432 && command -v createdb dropdb psql',
      expected: undefined,
      expectedFences: undefined,
      closeLine: 0,
    });
    return result.code === 0
      ? undefined
      : `PostgreSQL is not ready at 127.0.0.1:5432, or createdb, dropdb or psql is missing: ${result.output.trim() || `exit code ${result.code}`}`;
  } finally {
    await probe.close();
  }
}
