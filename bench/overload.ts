// `npm run bench:overload`: what load shedding buys under overload. For each run, the to-do service
// is started without shedding, its capacity measured (closed loop), and then sent three times that
// rate open loop (autocannon's overallRate over many connections); then the same with shedding on.
// Reported per run: the capacity, and for each server the admitted requests' p50 and p99 latency,
// how many were admitted and how many were shed. Not a test: the figures depend on the machine, and
// are recorded in docs/edge.md with the date and the machine.
//
//   npm run bench:overload                       three runs of 10 s at 3× capacity
//   npm run bench:overload -- --runs 5 --seconds 20 --factor 3 --title-bytes 100 --shed=--shed-waiting=64
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import type { ServerProcess } from './processes.js';
import { startService } from './servers.js';
import { percentileOfSorted } from './stats.js';

/** Connections of the open-loop run: enough that the rate, not the connections, sets the pace. */
const OPEN_LOOP_CONNECTIONS = 400;
const CAPACITY_SECONDS = 5;

interface Outcome {
  readonly admitted: Float64Array;
  readonly shed: number;
  readonly other: number;
  readonly seconds: number;
}

/** The first part of a run, while the server warms up and the queues fill, is not counted. */
const WARM_UP_FRACTION = 0.3;

/**
 * Open loop at `rate` requests a second (0: closed loop, as fast as `connections` allow) for
 * `seconds`; the answers of the warm-up are left out.
 */
function drive(url: string, body: string, connections: number, seconds: number, rate: number): Promise<Outcome> {
  const admitted: number[] = [];
  let shed = 0;
  let other = 0;
  const countedFrom = performance.now() + seconds * 1000 * WARM_UP_FRACTION;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: `${url}/todos`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        connections,
        duration: seconds,
        timeout: 30,
        ...(rate > 0 ? { overallRate: rate } : {}),
      },
      (error: Error | null) => {
        if (error !== null) reject(error);
        else resolve({ admitted: Float64Array.from(admitted).sort(), shed, other, seconds: seconds * (1 - WARM_UP_FRACTION) });
      },
    );
    instance.on('response', (_client: unknown, status: number, _bytes: number, responseTime_ms: number) => {
      if (performance.now() < countedFrom) return;
      if (status === 201) admitted.push(responseTime_ms);
      else if (status === 503) shed += 1;
      else other += 1;
    });
  });
}

function describeOutcome(name: string, outcome: Outcome): string {
  const p = (fraction: number): string => percentileOfSorted(outcome.admitted, fraction).toFixed(1);
  const perSecond = (count: number): string => (count / outcome.seconds).toFixed(0);
  return `| ${name} | ${perSecond(outcome.admitted.length)} | ${p(0.5)} | ${p(0.99)} | ${perSecond(outcome.shed)} | ${outcome.other} |`;
}

async function withService<T>(options: readonly string[], work: (server: ServerProcess) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'overload-'));
  const server = await startService('todo', 'todo', `sqlite:${join(dir, 'todo.sqlite')}`, ['--access-log', 'off', ...options]);
  try {
    return await work(server);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '3' },
      seconds: { type: 'string', default: '10' },
      factor: { type: 'string', default: '3' },
      'title-bytes': { type: 'string', default: '100' },
      shed: { type: 'string', default: '--shed-waiting=64' },
      'server-args': { type: 'string', default: '' },
    },
  });
  const runs = Number(values.runs);
  const seconds = Number(values.seconds);
  const factor = Number(values.factor);
  const titleBytes = Number(values['title-bytes']);
  const shedOption = values.shed;
  const serverArgs = values['server-args'].split(' ').filter((arg) => arg !== '');
  const body = JSON.stringify({ title: 'x'.repeat(titleBytes), done: false });
  const lines = [
    `POST /todos with a ${titleBytes}-byte title, SQLite file${serverArgs.length > 0 ? ` (${serverArgs.join(' ')})` : ''}; ${factor}× capacity open loop over ${OPEN_LOOP_CONNECTIONS} connections for ${seconds} s; shedding with ${shedOption}`,
    '',
    '| run · server | admitted /s | admitted p50 ms | admitted p99 ms | shed /s | other answers |',
    '|---|---:|---:|---:|---:|---:|',
  ];
  for (let run = 1; run <= runs; run++) {
    // The rate it sustains: closed loop over as many connections as the overload uses.
    const capacity = await withService(serverArgs, async (server) => {
      const measured = await drive(server.url, body, OPEN_LOOP_CONNECTIONS, CAPACITY_SECONDS, 0);
      return measured.admitted.length / measured.seconds;
    });
    const rate = Math.round(capacity * factor);
    process.stderr.write(`bench:overload: run ${run}: capacity ${capacity.toFixed(0)} req/s, offering ${rate} req/s\n`);
    const without = await withService(serverArgs, (server) => drive(server.url, body, OPEN_LOOP_CONNECTIONS, seconds, rate));
    const shedding = await withService([...serverArgs, shedOption], (server) =>
      drive(server.url, body, OPEN_LOOP_CONNECTIONS, seconds, rate),
    );
    lines.push(`| ${run} · capacity ${capacity.toFixed(0)} req/s, offered ${rate} | | | | | |`);
    lines.push(describeOutcome(`${run} · no shedding`, without));
    lines.push(describeOutcome(`${run} · shedding`, shedding));
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

await main();
