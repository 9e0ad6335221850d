// The migration kit as its tests drive it: `diff` in this process (its output caught) or as the
// compiled command line, `record` as a process, and HAR files written from a list of requests.
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'lossless-json';
import { runMigrationCommand } from '../../src/migration/command.js';
import type { HarEntry } from '../../src/migration/har.js';
import type { MigrationReport } from '../../src/migration/report.js';
import { runCli } from '../support/service-process.js';

export interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `diff` with these options, in this process. */
export async function diffInProcess(args: readonly string[]): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await runMigrationCommand('diff', args, {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    stderrIsTerminal: false,
  });
  return { code, stdout, stderr };
}

/** `node dist/cli.js ARGS` to its end. */
export async function cliRun(args: readonly string[]): Promise<Run> {
  const child = runCli(args);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

export interface Folder {
  readonly path: (name: string) => string;
  remove(): void;
}

export function tempFolder(): Folder {
  const folder = mkdtempSync(join(tmpdir(), 'migration-kit-'));
  return {
    path: (name) => join(folder, name),
    remove: () => rmSync(folder, { recursive: true, force: true }),
  };
}

export interface PlannedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers?: readonly (readonly [string, string])[];
  readonly json?: string;
}

/** A HAR 1.2 file of these requests (their answers left empty: a replay reads only requests). */
export function writeHar(file: string, requests: readonly PlannedRequest[]): void {
  const entries: HarEntry[] = requests.map((request) => ({
    startedDateTime: new Date(0).toISOString(),
    time: 0,
    request: {
      method: request.method,
      url: `http://recorded.example${request.path}`,
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: (request.headers ?? []).map(([name, value]) => ({ name, value })),
      queryString: [],
      ...(request.json === undefined
        ? {}
        : { postData: { mimeType: 'application/json', text: request.json } }),
      headersSize: -1,
      bodySize: request.json === undefined ? 0 : Buffer.byteLength(request.json),
    },
    response: {
      status: 0,
      statusText: '',
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: [],
      content: { size: 0, mimeType: '' },
      redirectURL: '',
      headersSize: -1,
      bodySize: 0,
    },
    cache: {},
    timings: { send: 0, wait: 0, receive: 0 },
  }));
  const har = { log: { version: '1.2', creator: { name: 'test', version: '1' }, entries } };
  writeFileSync(file, JSON.stringify(har));
}

/** The JSON report a run wrote, numbers read as plain numbers where they fit. */
export function readReport(file: string): MigrationReport {
  return parse(readFileSync(file, 'utf8'), undefined, (value) => {
    const number = Number(value);
    return Number.isSafeInteger(number) ? number : value;
  }) as MigrationReport;
}

/** Each differing request as `METHOD target` with the paths that differ, as the report lists them. */
export function differencesOf(report: MigrationReport): [string, string[]][] {
  return report.differences.map((one) => [
    `${one.method} ${one.target}`,
    (one.fields ?? []).map((field) => field.path),
  ]);
}
