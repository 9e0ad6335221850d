// `npm run bench:overload`: does load shedding hold the admitted requests' latency to its bound
// under three times the load the service sustains? Each run starts a fresh to-do service on a
// SQLite file three times: to measure its capacity C (closed loop), then to offer it 3 × C open
// loop (open-loop.ts) without shedding, then with `--shed-waiting N`, N = C × the target latency,
// and `--shed-loop-busy 80`. Then, at the same offered rate, a bare node:http server that answers
// every request 503 unread (baseline.ts --shed-all): what refusing the whole load costs at the
// least, so that a run says whether any shedding inside the process could leave room for admitted
// requests.
//
// The bound, stated before the runs (docs/load-shedding.md): an admitted request finds fewer
// than N requests waiting ahead of it, and the store completes them at about C a second, so it
// waits at most N ÷ C = the target; the allowance adds what comes before admission and after the
// store (its turn on the event loop, one commit, the answer).
//
// The service runs on one core and this generator on the other (`taskset`): the point is the
// service's latency when it, not the generator, is saturated, and a generator that shares the
// service's core takes CPU from it exactly when the load is highest. (The instruction counts need
// no such care: they count the service's instructions, whatever else runs.) Not a test: the figures
// depend on the machine, and are recorded in docs/load-shedding.md with the date, the commit and
// the load.
//
//   npm run bench:overload                            five runs of 6 s at 3 × capacity
//   npm run bench:overload -- --runs 5 --seconds 20 --factor 2 --title-bytes 8000
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { offer, requestBytes, type Answers } from './open-loop.js';
import type { ServerProcess } from './processes.js';
import { startBaseline, startService } from './servers.js';
import { percentileOfSorted } from './stats.js';

const SERVICE_CORE = '0';
const GENERATOR_CORE = '1';
/** Closed-loop connections of the capacity phase: enough to fill group commit's batches. */
const CAPACITY_CONNECTIONS = 256;
const CAPACITY_SECONDS = 5;
/** Open connections of the generator at most; past them the due requests wait in its own line. */
const CONNECTIONS_MAX = 4000;
/** Connections open before the load starts, as clients already there; without them the first
 * moment of the run is a storm of new connections that leaves a backlog a saturated service never
 * works off, whatever its shedding. */
const CONNECTIONS_AT_START = 1000;
/** The first part of a phase, while the server warms up and its queues fill, is not counted. */
const WARM_UP_FRACTION = 0.25;

interface Phase {
  readonly answers: Answers;
  /** Admitted (201) latencies in ms, sorted. */
  readonly admitted: Float64Array;
  /** Shed (503) latencies in ms, sorted. */
  readonly shed: Float64Array;
  /** CPU time the service used per answer of the phase, in µs (its threads, user and system). */
  readonly cpuPerAnswer_us: number;
  /** Share of a core the service and the generator had over the phase: below 100 %, others had the rest. */
  readonly serviceCore: number;
  readonly generatorCore: number;
}

/** The bare server refusing every request, on the service's core. */
async function withBareShedder<T>(work: (server: ServerProcess) => Promise<T>): Promise<T> {
  const server = await startBaseline('bare, shedding all', ['--shed-all'], {
    wrapper: ['taskset', '-c', SERVICE_CORE],
  });
  try {
    return await work(server);
  } finally {
    await server.stop();
  }
}

async function withService<T>(
  options: readonly string[],
  work: (server: ServerProcess) => Promise<T>,
): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'overload-'));
  const server = await startService(
    'todo',
    'todo',
    `sqlite:${join(dir, 'todo.sqlite')}`,
    ['--access-log', 'off', ...options],
    {
      wrapper: ['taskset', '-c', SERVICE_CORE],
    },
  );
  try {
    return await work(server);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Offers `rate` (0: closed loop) to the service and counts its answers and the CPU it spent on them. */
async function drive(
  server: ServerProcess,
  request: Buffer,
  rate: number,
  seconds: number,
  connectionsMax: number,
): Promise<Phase> {
  const cpuBefore = server.cpuSeconds() ?? NaN;
  const generatorBefore = process.cpuUsage();
  const started = performance.now();
  const answers = await offer({
    port: server.port,
    request,
    rate,
    seconds,
    connectionsMax,
    connectionsAtStart: Math.min(connectionsMax, CONNECTIONS_AT_START),
    warmUpSeconds: seconds * WARM_UP_FRACTION,
  });
  const cpu = (server.cpuSeconds() ?? NaN) - cpuBefore;
  const generator = process.cpuUsage(generatorBefore);
  const wall_s = (performance.now() - started) / 1000;
  const sorted = (status: number): Float64Array =>
    Float64Array.from(answers.latencies.get(status) ?? []).sort();
  const count = [...answers.latencies.values()].reduce((sum, list) => sum + list.length, 0);
  // Every answer of the phase, warm-up included, shared the CPU time: the counted ones are a part.
  const counted = count / answers.countedSeconds;
  return {
    answers,
    admitted: sorted(201),
    shed: sorted(503),
    cpuPerAnswer_us: (cpu / seconds / counted) * 1e6,
    serviceCore: cpu / wall_s,
    generatorCore: (generator.user + generator.system) / 1e6 / wall_s,
  };
}

/** One phase's line; `judged` false for the bare server's floor, which is not held to the bound. */
function row(
  label: string,
  phase: Phase,
  bound_ms: number,
  allowance_ms: number,
  capacity: number,
  judged = true,
): string {
  const ms = (sorted: Float64Array, fraction: number): string =>
    sorted.length === 0 ? '–' : percentileOfSorted(sorted, fraction).toFixed(0);
  const perSecond = (count: number): string => (count / phase.answers.countedSeconds).toFixed(0);
  const percent = (share: number): string => `${(share * 100).toFixed(0)} %`;
  const others = [...phase.answers.latencies]
    .filter(([status]) => status !== 201 && status !== 503)
    .reduce((sum, [, list]) => sum + list.length, 0);
  const p99 = percentileOfSorted(phase.admitted, 0.99);
  // Beside the verdict, what share of the capacity it was for: a bound held for a handful of
  // requests let through an otherwise refused load shows refusal more than service.
  const admittedShare = phase.admitted.length / phase.answers.countedSeconds / capacity;
  // A generator that sent late made the latency, not the service: such a phase shows nothing.
  const verdict = !judged
    ? '(the floor)'
    : phase.answers.generatorLagMax_ms > allowance_ms
      ? 'generator behind'
      : p99 <= bound_ms
        ? 'yes'
        : 'no';
  return `| ${label} | ${perSecond(phase.admitted.length)} (${percent(admittedShare)}) | ${perSecond(phase.shed.length)} | ${ms(phase.admitted, 0.5)} | ${ms(phase.admitted, 0.99)} | ${ms(phase.shed, 0.5)} | ${ms(phase.shed, 0.99)} | ${others + phase.answers.unanswered} | ${phase.cpuPerAnswer_us.toFixed(0)} | ${percent(phase.serviceCore)} | ${phase.answers.generatorLagMax_ms.toFixed(0)} | ${percent(phase.generatorCore)} | ${verdict} |`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '5' },
      seconds: { type: 'string', default: '6' },
      factor: { type: 'string', default: '3' },
      'target-ms': { type: 'string', default: '100' },
      'allowance-ms': { type: 'string', default: '50' },
      'title-bytes': { type: 'string', default: '100' },
      'server-args': { type: 'string', default: '' },
      /** Options of shedding beside --shed-waiting. */
      'shed-args': { type: 'string', default: '--shed-loop-busy 80' },
    },
  });
  const runs = Number(values.runs);
  const seconds = Number(values.seconds);
  const factor = Number(values.factor);
  const target_ms = Number(values['target-ms']);
  const allowance_ms = Number(values['allowance-ms']);
  const bound_ms = target_ms + allowance_ms;
  const words = (text: string): string[] => text.split(' ').filter((word) => word !== '');
  const serverArgs = words(values['server-args']);
  const shedArgs = words(values['shed-args']);
  const request = requestBytes(
    'POST',
    '/todos',
    JSON.stringify({ title: 'x'.repeat(Number(values['title-bytes'])), done: false }),
  );
  if (spawnSync('taskset', ['-pc', GENERATOR_CORE, String(process.pid)]).status !== 0)
    throw new Error('taskset could not pin the generator: is util-linux installed?');
  const lines = [
    `POST /todos (${values['title-bytes']}-byte title) on a SQLite file${serverArgs.length > 0 ? ` (${serverArgs.join(' ')})` : ''}; ${factor} × capacity open loop for ${seconds} s (the first ${WARM_UP_FRACTION * 100} % not counted); service on core ${SERVICE_CORE}, generator on core ${GENERATOR_CORE}; bound: admitted p99 ≤ ${target_ms} + ${allowance_ms} ms; load average ${loadavg()[0]?.toFixed(1)} at the start`,
    '',
    '| run · server | admitted /s (share of C) | shed /s | admitted p50 ms | admitted p99 ms | 503 p50 ms | 503 p99 ms | other or none | service CPU µs per answer | service core used | generator late, ms at most | generator core used | within bound |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (let run = 1; run <= runs; run++) {
    const capacity = await withService(serverArgs, async (server) => {
      const closed = await drive(server, request, 0, CAPACITY_SECONDS, CAPACITY_CONNECTIONS);
      return closed.admitted.length / closed.answers.countedSeconds;
    });
    const rate = Math.round(capacity * factor);
    const waitingMax = Math.max(1, Math.round((capacity * target_ms) / 1000));
    process.stderr.write(
      `bench:overload: run ${run}: capacity ${capacity.toFixed(0)} req/s, offering ${rate} req/s, --shed-waiting ${waitingMax}\n`,
    );
    const without = await withService(serverArgs, (server) =>
      drive(server, request, rate, seconds, CONNECTIONS_MAX),
    );
    const shedding = await withService(
      [...serverArgs, '--shed-waiting', String(waitingMax), ...shedArgs],
      (server) => drive(server, request, rate, seconds, CONNECTIONS_MAX),
    );
    const floor = await withBareShedder((server) =>
      drive(server, request, rate, seconds, CONNECTIONS_MAX),
    );
    lines.push(
      `| ${run} · capacity ${capacity.toFixed(0)} /s, offered ${rate} /s | | | | | | | | | | | | |`,
    );
    lines.push(row(`${run} · no shedding`, without, bound_ms, allowance_ms, capacity));
    lines.push(
      row(
        `${run} · ${['--shed-waiting', waitingMax, ...shedArgs].join(' ')}`,
        shedding,
        bound_ms,
        allowance_ms,
        capacity,
      ),
    );
    lines.push(
      row(`${run} · bare node:http, 503 to all`, floor, bound_ms, allowance_ms, capacity, false),
    );
  }
  lines.push('', `load average ${loadavg()[0]?.toFixed(1)} at the end`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

await main();
