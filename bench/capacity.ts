// `npm run bench:capacity`: the counts docs/capacity.md builds its model on that the other benches
// do not print. Short, bounded runs on loopback, each on a fresh service and a fresh file or
// database; each prints counts that do not depend on the machine's load (writes per batch, database
// transactions per request, server connections) beside the time-based ones (batches a second,
// req/s, the server's CPU seconds per request), which do.
//
//   npm run bench:capacity                         every part
//   npm run bench:capacity -- --part sqlite        SQLite group commit at 1, 10, 50 connections
//   npm run bench:capacity -- --part postgres      PostgreSQL batches, transactions, connections
//   npm run bench:capacity -- --part pinned        one service pinned to core 0 (run this bench
//                                                  itself under `taskset -c 1`): req/s and CPU
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { drive, type BenchRequest } from './load.js';
import type { ServerProcess, StartOptions } from './processes.js';
import { startService } from './servers.js';

const { values: flags } = parseArgs({
  options: {
    part: { type: 'string' },
    requests: { type: 'string', default: '20000' },
  },
});
const REQUESTS = Number(flags.requests);
const SERVER_URL = (process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(
  /\/+$/,
  '',
);
/** Linux's clock ticks a second, in which /proc/PID/stat gives CPU time. */
const TICKS_PER_S = 100;
/** PostgreSQL 15's backends flush their statistics within this of going idle (PGSTAT_IDLE_INTERVAL). */
const STATS_SETTLE_MS = 11_000;
const PINNED_ROUNDS = 3;

const WITHDRAW: BenchRequest = { method: 'POST', path: '/withdraw/alice/1' };
const READ_TODO: BenchRequest = { method: 'GET', path: '/todos/1' };
const READ_ACCOUNT: BenchRequest = { method: 'GET', path: '/accounts/alice' };
const INVALID: BenchRequest = {
  method: 'POST',
  path: '/todos',
  body: '{"done":true}',
  contentType: 'application/json',
};

/** User and system CPU seconds of the process so far, every thread. */
function cpu(pid: number): { user_s: number; system_s: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return { user_s: Number(fields[11]) / TICKS_PER_S, system_s: Number(fields[12]) / TICKS_PER_S };
}

/** The group commit's batch count and the writes they held, from the service's /metrics. */
async function batches(server: ServerProcess): Promise<{ count: number; writes: number }> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const value = (name: string): number => {
    const match = new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, 'm').exec(text);
    return match === null ? 0 : Number(match[1]);
  };
  return {
    count: value('store_group_commit_batch_size_count'),
    writes: value('store_group_commit_batch_size_sum'),
  };
}

interface Row {
  readonly label: string;
  readonly connections: number;
  readonly responses: number;
  readonly reqPerS: number;
  readonly batchesPerS: number;
  readonly writesPerBatch: number;
  readonly cpuUserUsPerReq: number;
  readonly cpuSystemUsPerReq: number;
  readonly transactionsPerReq?: number;
  readonly serverConnections?: number;
}

/** One bounded run: `amount` requests at `connections`, with the counts around it. */
async function measure(
  label: string,
  server: ServerProcess,
  request: BenchRequest,
  expectedStatus: number,
  connections: number,
  amount: number,
  database?: Database,
): Promise<Row> {
  // A warm-up of a tenth, so that V8 has compiled the path before it is counted.
  await drive(server.url, request, {
    connections,
    expectedStatus,
    amount: Math.max(500, amount / 10),
  });
  const batchesBefore = await batches(server);
  const cpuBefore = cpu(server.pid);
  const commitsBefore = database === undefined ? 0 : await database.commits();
  const sampler = database?.sampleConnections();
  const started = performance.now();
  const run = await drive(server.url, request, { connections, expectedStatus, amount });
  const elapsed_s = (performance.now() - started) / 1000;
  const serverConnections = await sampler?.stop();
  const commitsAfter = database === undefined ? 0 : await database.commits();
  const cpuAfter = cpu(server.pid);
  const batchesAfter = await batches(server);
  if (run.wrongStatus > 0 || run.errors > 0) {
    throw new Error(`${label}: ${run.wrongStatus} wrong statuses, ${run.errors} errors`);
  }
  const count = batchesAfter.count - batchesBefore.count;
  return {
    label,
    connections,
    responses: run.responses,
    reqPerS: run.responses / elapsed_s,
    batchesPerS: count / elapsed_s,
    writesPerBatch: count === 0 ? 0 : (batchesAfter.writes - batchesBefore.writes) / count,
    cpuUserUsPerReq: ((cpuAfter.user_s - cpuBefore.user_s) / run.responses) * 1e6,
    cpuSystemUsPerReq: ((cpuAfter.system_s - cpuBefore.system_s) / run.responses) * 1e6,
    ...(database === undefined
      ? {}
      : {
          // The sampler's own queries are transactions too: one each, taken off.
          transactionsPerReq:
            (commitsAfter - commitsBefore - (serverConnections?.samples ?? 0) - 1) / run.responses,
          serverConnections: serverConnections?.most ?? 0,
        }),
  };
}

function print(rows: readonly Row[]): void {
  const head =
    '| run | conns | requests | req/s | batches/s | writes/batch | CPU µs/req user + sys | DB transactions/req | server connections (most) |';
  console.log(head);
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const row of rows) {
    console.log(
      `| ${row.label} | ${row.connections} | ${row.responses} | ${row.reqPerS.toFixed(0)} | ${row.batchesPerS.toFixed(0)} | ${row.writesPerBatch.toFixed(1)} | ${row.cpuUserUsPerReq.toFixed(0)} + ${row.cpuSystemUsPerReq.toFixed(0)} | ${row.transactionsPerReq?.toFixed(3) ?? '–'} | ${row.serverConnections ?? '–'} |`,
    );
  }
}

interface Database {
  readonly url: string;
  /** xact_commit of the database: every statement sent outside BEGIN … COMMIT is one. */
  commits(): Promise<number>;
  /** Counts the database's server connections every 100 ms until stopped. */
  sampleConnections(): { stop(): Promise<{ most: number; samples: number }> };
  drop(): Promise<void>;
}

async function freshDatabase(name: string): Promise<Database> {
  const { default: pg } = await import('pg');
  const admin = new pg.Client({ connectionString: `${SERVER_URL}/postgres` });
  await admin.connect();
  const database = `bench_capacity_${name}_${process.pid}_${Date.now()}`;
  await admin.query(`CREATE DATABASE ${database}`);
  const commits = async (): Promise<number> => {
    // A backend reports its counts at most once a second, and an idle one within 10 s: wait for both.
    await new Promise((resolve) => setTimeout(resolve, STATS_SETTLE_MS));
    await admin.query('SELECT pg_stat_clear_snapshot()');
    const { rows } = await admin.query<{ n: string }>(
      'SELECT xact_commit AS n FROM pg_stat_database WHERE datname = $1',
      [database],
    );
    return Number(rows[0]?.n ?? 0);
  };
  return {
    url: `${SERVER_URL}/${database}`,
    commits,
    sampleConnections() {
      let most = 0;
      let samples = 0;
      let running = true;
      const loop = (async () => {
        while (running) {
          const { rows } = await admin.query<{ n: string }>(
            'SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1',
            [database],
          );
          most = Math.max(most, Number(rows[0]?.n ?? 0));
          samples += 1;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      })();
      return {
        async stop() {
          running = false;
          await loop;
          return { most, samples };
        },
      };
    },
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.end();
    },
  };
}

async function withService<T>(
  service: 'todo' | 'bank',
  db: string,
  options: readonly string[],
  body: (server: ServerProcess) => Promise<T>,
  start?: StartOptions,
): Promise<T> {
  const server = await startService(`${service} ${db}`, service, db, options, start);
  try {
    return await body(server);
  } finally {
    await server.stop();
  }
}

async function sqliteFile<T>(body: (db: string) => Promise<T>): Promise<T> {
  const folder = await mkdtemp(join(tmpdir(), 'bench-capacity-'));
  try {
    return await body(`sqlite:${join(folder, 'data.sqlite')}`);
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/** SQLite's group commit: one batch is one transaction and one fsync. */
async function sqlitePart(): Promise<Row[]> {
  const rows: Row[] = [];
  for (const connections of [1, 10, 50]) {
    const amount = connections === 1 ? Math.min(REQUESTS, 3000) : REQUESTS;
    rows.push(
      await sqliteFile((db) =>
        withService('bank', db, [], (server) =>
          measure('SQLite withdraw', server, WITHDRAW, 200, connections, amount),
        ),
      ),
    );
  }
  return rows;
}

/** PostgreSQL: batches, transactions per request, connections, with and without the limiter. */
async function postgresPart(): Promise<Row[]> {
  const rows: Row[] = [];
  const runs: ReadonlyArray<{
    label: string;
    service: 'todo' | 'bank';
    request: BenchRequest;
    status: number;
    options: readonly string[];
    connections: number;
  }> = [
    {
      label: 'PostgreSQL withdraw',
      service: 'bank',
      request: WITHDRAW,
      status: 200,
      options: [],
      connections: 1,
    },
    {
      label: 'PostgreSQL withdraw',
      service: 'bank',
      request: WITHDRAW,
      status: 200,
      options: [],
      connections: 10,
    },
    {
      label: 'PostgreSQL withdraw',
      service: 'bank',
      request: WITHDRAW,
      status: 200,
      options: [],
      connections: 50,
    },
    {
      label: 'PostgreSQL withdraw, --rate-limit',
      service: 'bank',
      request: WITHDRAW,
      status: 200,
      options: ['--rate-limit', 'writes=1000000/s:1000000,reads=1000000/s:1000000'],
      connections: 50,
    },
    {
      label: 'PostgreSQL GET /accounts/alice',
      service: 'bank',
      request: READ_ACCOUNT,
      status: 200,
      options: [],
      connections: 50,
    },
    {
      label: 'PostgreSQL GET /accounts/alice, --rate-limit',
      service: 'bank',
      request: READ_ACCOUNT,
      status: 200,
      options: ['--rate-limit', 'writes=1000000/s:1000000,reads=1000000/s:1000000'],
      connections: 50,
    },
    {
      label: 'PostgreSQL withdraw, --db-pooler transaction',
      service: 'bank',
      request: WITHDRAW,
      status: 200,
      options: ['--db-pooler', 'transaction'],
      connections: 50,
    },
  ];
  for (const run of runs) {
    const database = await freshDatabase(run.service);
    try {
      const amount = run.connections === 1 ? Math.min(REQUESTS, 2000) : REQUESTS;
      rows.push(
        await withService(run.service, database.url, run.options, (server) =>
          measure(run.label, server, run.request, run.status, run.connections, amount, database),
        ),
      );
    } finally {
      await database.drop();
    }
  }
  return rows;
}

/** One service pinned to core 0; the load generator (this process) belongs on core 1. */
async function pinnedPart(): Promise<Row[]> {
  const pinned: StartOptions = { wrapper: ['taskset', '-c', '0'] };
  const rows: Row[] = [];
  await sqliteFile((db) =>
    withService(
      'todo',
      db,
      [],
      async (server) => {
        const created = await fetch(`${server.url}/todos`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"title":"Buy milk"}',
        });
        if (created.status !== 201) throw new Error(`create: ${created.status}`);
        // Alternating rounds, so that both requests see about the same load from others.
        for (let round = 1; round <= PINNED_ROUNDS; round += 1) {
          rows.push(await measure('pinned GET /todos/1', server, READ_TODO, 200, 10, REQUESTS));
          rows.push(await measure('pinned POST /todos 422', server, INVALID, 422, 10, REQUESTS));
        }
      },
      pinned,
    ),
  );
  await sqliteFile((db) =>
    withService(
      'bank',
      db,
      [],
      async (server) => {
        rows.push(await measure('pinned withdraw', server, WITHDRAW, 200, 50, REQUESTS));
      },
      pinned,
    ),
  );
  return rows;
}

const parts: Record<string, () => Promise<Row[]>> = {
  sqlite: sqlitePart,
  postgres: postgresPart,
  pinned: pinnedPart,
};
const chosen = flags.part === undefined ? Object.keys(parts) : [flags.part];
for (const name of chosen) {
  const part = parts[name];
  if (part === undefined) throw new Error(`--part must be one of ${Object.keys(parts).join(', ')}`);
  console.log(
    `\n## ${name} (${new Date().toISOString()}, load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')})\n`,
  );
  print(await part());
}
