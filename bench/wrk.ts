// One bounded load run with wrk (a load generator written in C) against one server, on loopback,
// with wrk pinned to one core. wrk reports how many answers it got, how many were not 2xx or 3xx,
// and its socket errors; it does not report each status, so the exact statuses of these servers
// are checked by the autocannon part of the same run, and here only their class.
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
  /** Answers whose status class was not the expected one (2xx against 4xx). */
  readonly wrongStatus: number;
  /** Connect, read and write errors and time-outs. */
  readonly errors: number;
}

/**
 * wrk takes a request's method, body and headers from a Lua script. The body sits in a long
 * bracket, which Lua reads as it is (no escapes), so any JSON text fits unless it holds the bracket's end.
 */
export function wrkScript(dir: string, name: string, req: BenchRequest): string {
  if (req.idempotencyKey !== undefined) throw new Error(`${name}: wrk sends the same headers every time, not a fresh Idempotency-Key`);
  const lines = [`wrk.method = "${req.method}"`];
  if (req.body !== undefined) {
    if (req.body.includes(']==]')) throw new Error(`${name}: the body cannot be written in a Lua long bracket`);
    lines.push(`wrk.body = [==[${req.body}]==]`);
  }
  if (req.contentType !== undefined) lines.push(`wrk.headers["Content-Type"] = "${req.contentType}"`);
  const file = join(dir, `${name.replace(/[^A-Za-z0-9]+/g, '-')}.lua`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

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
  ]);
  return parseWrk(stdout, plan.expectedStatus);
}

/** wrk's summary: "N requests in Ts", "Requests/sec: R", and, when there were any, non-2xx/3xx answers and socket errors. */
export function parseWrk(stdout: string, expectedStatus: number): WrkMeasurement {
  const total = /(\d+) requests in ([\d.]+)(us|ms|s|m)\b/.exec(stdout);
  const rate = /Requests\/sec:\s+([\d.]+)/.exec(stdout);
  if (total === null || rate === null) throw new Error(`wrk printed no summary: ${stdout.slice(-300)}`);
  const responses = Number(total[1]);
  const notOk = Number(/Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1] ?? 0);
  const sockets = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
  const errors = sockets === null ? 0 : sockets.slice(1).reduce((sum, n) => sum + Number(n), 0);
  const expectsOk = expectedStatus < 400;
  return {
    responses,
    requestsPerSec: Number(rate[1]),
    wrongStatus: expectsOk ? notOk : responses - notOk,
    errors,
  };
}
