// One bounded load run with wrk (a load generator written in C) against one server, on loopback,
// with wrk pinned to one core. wrk reports how many answers it got, how many had a status of 400 or
// more, and its socket errors; it does not report each status (a Lua hook that saw each one would
// make it parse every answer, and cost the headroom it is used for), so a service's exact statuses
// are read from its own /metrics (bench/metrics-statuses.ts), and here only that class.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { BenchRequest } from './load.js';

const run = promisify(execFile);

export interface WrkRun {
  readonly connections: number;
  readonly duration_s: number;
  /** The core wrk runs on. */
  readonly cpu: number;
  readonly expectedStatus: number;
}

export interface WrkMeasurement {
  readonly responses: number;
  readonly requestsPerSec: number;
  /** Answers on the wrong side of 400: wrk counts those at 400 or above, and nothing finer. */
  readonly wrongStatus: number;
  /** Connect, read and write errors and time-outs. */
  readonly errors: number;
}

/**
 * wrk takes a request's method, body and headers from a Lua script. The body is written as a Lua
 * string with every byte outside printable ASCII, and the quote and backslash, as a decimal escape,
 * so that Lua reads back exactly the body's UTF-8 bytes.
 */
export function wrkScript(dir: string, name: string, req: BenchRequest): string {
  if (req.idempotencyKey !== undefined) throw new Error(`${name}: wrk sends the same headers every time, not a fresh Idempotency-Key`);
  const lines = [`wrk.method = "${req.method}"`];
  if (req.body !== undefined) lines.push(`wrk.body = "${luaBytes(req.body)}"`);
  if (req.contentType !== undefined) lines.push(`wrk.headers["Content-Type"] = "${luaBytes(req.contentType)}"`);
  const file = join(dir, `${name.replace(/[^A-Za-z0-9]+/g, '-')}.lua`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

function luaBytes(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const plain = byte >= 0x20 && byte < 0x7f && byte !== 0x22 && byte !== 0x5c;
    out += plain ? String.fromCharCode(byte) : `\\${String(byte).padStart(3, '0')}`;
  }
  return out;
}

/** Longer than any round: a wrk that hangs fails the run rather than hold it forever. */
const WRK_GRACE_MS = 30_000;

export async function driveWrk(baseUrl: string, path: string, script: string, plan: WrkRun): Promise<WrkMeasurement> {
  const { stdout } = await run('taskset', [
    '-c',
    String(plan.cpu),
    'wrk',
    '-t1',
    `-c${plan.connections}`,
    `-d${plan.duration_s}s`,
    '--timeout',
    '10s',
    '-s',
    script,
    baseUrl + path,
  ], { timeout: plan.duration_s * 1000 + WRK_GRACE_MS });
  return parseWrk(stdout, plan.expectedStatus);
}

/** wrk's summary: "N requests in T", "Requests/sec: R", and, when there were any, answers of 400 or more and socket errors. */
export function parseWrk(stdout: string, expectedStatus: number): WrkMeasurement {
  const total = /(\d+) requests in /.exec(stdout);
  const rate = /Requests\/sec:\s+([\d.]+)/.exec(stdout);
  if (total === null || rate === null) throw new Error(`wrk printed no summary: ${stdout.slice(-300)}`);
  const responses = Number(total[1]);
  const notOk = Number(/Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1] ?? 0);
  const sockets = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
  const errors = sockets === null ? 0 : sockets.slice(1).reduce((sum, n) => sum + Number(n), 0);
  // wrk's "Non-2xx or 3xx" are the answers with a status above 399.
  const expectsOk = expectedStatus < 400;
  return {
    responses,
    requestsPerSec: Number(rate[1]),
    wrongStatus: expectsOk ? notOk : responses - notOk,
    errors,
  };
}
