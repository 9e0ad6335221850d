// `npm run bench:cpu-split`: where the CPU of a request on PostgreSQL goes, with limits held in
// PostgreSQL off and on: each process's user and system time (from /proc) over a run at
// POSTGRES_CONNECTIONS connections, divided by the requests answered, for the service, every
// PostgreSQL process together and the load generator (this process), beside the database's
// transactions a request (`xact_commit` of pg_stat_database, read after PostgreSQL has reported
// them). The servers alternate, round by round; each figure moves with the machine's load (±20 %
// between rounds on a shared two-core machine), the transactions a request do not.
//
//   npm run bench:cpu-split                                  GET /todos/1, 3 rounds of 4 s
//   npm run bench:cpu-split -- --path /accounts/alice --rounds 5
import { readdirSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { drive } from './load.js';
import type { ServerProcess } from './processes.js';
import { POSTGRES_CONNECTIONS } from './scenarios.js';
import { startService } from './servers.js';

const { values: flags } = parseArgs({
  options: {
    path: { type: 'string', default: '/todos/1' },
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '4' },
  },
});

const SERVER_URL = (process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(
  /\/+$/,
  '',
);
const UNREACHED_LIMITS = 'writes=1000000/s:1000000,reads=1000000/s:1000000';
/** Clock ticks a second of /proc/<pid>/stat's times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;
/** PostgreSQL 15 reports a backend's counts once it has been idle a while. */
const STATS_WAIT_MS = 1_500;

interface Times {
  readonly user: number;
  readonly system: number;
}

/** A process's user and system CPU seconds; zero once it is gone. */
function timesOf(pid: number | string): Times {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return {
      user: Number(fields[11]) / TICKS_PER_SECOND,
      system: Number(fields[12]) / TICKS_PER_SECOND,
    };
  } catch {
    return { user: 0, system: 0 };
  }
}

/** Every PostgreSQL process's times together (the backends, the WAL writer, the checkpointer…). */
function postgresTimes(): Times {
  let user = 0;
  let system = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    let name = '';
    try {
      name = readFileSync(`/proc/${pid}/comm`, 'utf8');
    } catch {
      continue;
    }
    if (!name.startsWith('postgres')) continue;
    const times = timesOf(pid);
    user += times.user;
    system += times.system;
  }
  return { user, system };
}

const perRequest = (before: Times, after: Times, requests: number): string =>
  `${(((after.user - before.user) * 1e6) / requests).toFixed(1)} + ${(((after.system - before.system) * 1e6) / requests).toFixed(1)}`;

async function main(): Promise<void> {
  const { path } = flags;
  const service = path.startsWith('/todos') ? 'todo' : 'bank';
  const request = { method: 'GET', path } as const;
  const database = `bench_cpu_split_${process.pid}_${Date.now()}`;
  const { default: pg } = await import('pg');
  const admin = new pg.Client({ connectionString: `${SERVER_URL}/postgres` });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  const transactions = async (): Promise<number> =>
    Number(
      (
        await admin.query<{ n: number }>(
          'SELECT xact_commit::float8 AS n FROM pg_stat_database WHERE datname = $1',
          [database],
        )
      ).rows[0]?.n,
    );
  const url = `${SERVER_URL}/${database}`;
  const servers: [string, ServerProcess][] = [];
  const lines = [
    `${path} on PostgreSQL at ${POSTGRES_CONNECTIONS} connections, ${flags.duration} s a round: CPU µs a request, user + system, and PostgreSQL transactions a request.`,
    '',
    '| Round | Limits | req/s | service | PostgreSQL | load generator | transactions/req |',
    '|---:|---|---:|---:|---:|---:|---:|',
  ];
  try {
    servers.push(['off', await startService('limits off', service, url)]);
    servers.push([
      'on',
      await startService('limits on', service, url, ['--rate-limit', UNREACHED_LIMITS]),
    ]);
    for (let round = 1; round <= Number(flags.rounds); round++) {
      for (const [label, server] of round % 2 === 1 ? servers : [...servers].reverse()) {
        await drive(server.url, request, {
          connections: POSTGRES_CONNECTIONS,
          duration_s: 1,
          expectedStatus: 200,
        });
        await new Promise((resolve) => setTimeout(resolve, STATS_WAIT_MS));
        const committed = await transactions();
        const before = [timesOf(server.pid), postgresTimes(), timesOf(process.pid)];
        const run = await drive(server.url, request, {
          connections: POSTGRES_CONNECTIONS,
          duration_s: Number(flags.duration),
          expectedStatus: 200,
        });
        const after = [timesOf(server.pid), postgresTimes(), timesOf(process.pid)];
        await new Promise((resolve) => setTimeout(resolve, STATS_WAIT_MS));
        const n = run.responses;
        if (run.wrongStatus > 0 || run.errors > 0)
          throw new Error(`${label}: ${JSON.stringify(run.statusCounts)}, ${run.errors} errors`);
        const cells = before.map((b, i) => perRequest(b, after[i] as Times, n));
        lines.push(
          `| ${round} | ${label} | ${run.requestsPerSec.toFixed(0)} | ${cells.join(' | ')} | ${(((await transactions()) - committed) / n).toFixed(3)} |`,
        );
      }
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await Promise.all(servers.map(([, server]) => server.stop()));
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  }
}

await main();
