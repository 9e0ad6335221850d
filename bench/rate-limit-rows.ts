// `npm run bench:rate-limit-rows`: do the limiters' tables stay bounded when clients come and go?
// Drives 1,000,000 distinct clients' decisions (one request each, as a flood of new addresses
// would) through the shared limiter on a fresh PostgreSQL database and through the in-process one,
// with `reads=1/s:2` (window 2 s, sweep period 500 ms), and prints every 100,000 clients: the
// table's rows, its bytes (heap and key index), the clients admitted within the last window plus
// sweep period (the stated bound: rows may not exceed it) and the process's RSS.
//
//   npm run bench:rate-limit-rows
//   npm run bench:rate-limit-rows -- --clients 200000
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { openPostgresRateLimiter } from '../src/db/postgres/rate-limits.js';
import { GcraTable } from '../src/rate-limits/gcra-table.js';
import type { RateLimiter } from '../src/rate-limits/limiter.js';
import { sweepEveryMs, windowMs, type RateLimits } from '../src/rate-limits/policy.js';

const { values: flags } = parseArgs({
  options: { clients: { type: 'string', default: '1000000' } },
});
const CLIENTS = Number(flags.clients);
const REPORT_EVERY = 100_000;
/** Decisions in flight at once: the shared limiter batches them into statements of up to 1,024. */
const IN_FLIGHT = 4_096;
const LIMITS: RateLimits = { reads: { perSecond: 1, burst: 2 } };
const BOUND_MS =
  windowMs(LIMITS.reads as NonNullable<RateLimits['reads']>) +
  sweepEveryMs(windowMs(LIMITS.reads as NonNullable<RateLimits['reads']>));
const SERVER_URL = (process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(
  /\/+$/,
  '',
);

const address = (i: number): string => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
const mib = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);

interface Sample {
  readonly clients: number;
  readonly rows: number;
  readonly bytes: number | undefined;
  readonly boundClients: number;
  readonly rssBytes: number;
}

/** Decides CLIENTS distinct clients' one request each; `measure` is asked for rows and bytes every REPORT_EVERY. */
async function drive(
  limiter: RateLimiter,
  measure: () => Promise<{ rows: number; bytes?: number }>,
): Promise<{ samples: Sample[]; seconds: number }> {
  const samples: Sample[] = [];
  /** When each chunk of clients was decided: how many were admitted within the bound's span is read from it. */
  const decidedAt: { atMs: number; count: number }[] = [];
  const startMs = performance.now();
  for (let first = 0; first < CLIENTS; first += IN_FLIGHT) {
    const count = Math.min(IN_FLIGHT, CLIENTS - first);
    await Promise.all(
      Array.from({ length: count }, (_, i) => limiter.decide('reads', address(first + i))),
    );
    decidedAt.push({ atMs: performance.now(), count });
    const done = first + count;
    if (Math.floor(done / REPORT_EVERY) > Math.floor(first / REPORT_EVERY) || done === CLIENTS) {
      const { rows, bytes } = await measure();
      const nowMs = performance.now();
      // Every chunk that finished within the span, and the one before it (its decisions may have
      // been taken within it).
      const within = decidedAt.findIndex((chunk) => chunk.atMs >= nowMs - BOUND_MS);
      const boundClients = decidedAt
        .slice(Math.max(0, within - 1))
        .reduce((sum, chunk) => sum + chunk.count, 0);
      samples.push({
        clients: done,
        rows,
        bytes,
        boundClients,
        rssBytes: process.memoryUsage().rss,
      });
    }
  }
  return { samples, seconds: (performance.now() - startMs) / 1000 };
}

function print(title: string, run: { samples: Sample[]; seconds: number }): void {
  console.log(
    `\n${title}: ${CLIENTS.toLocaleString('en')} clients in ${run.seconds.toFixed(1)} s (${Math.round(CLIENTS / run.seconds).toLocaleString('en')} decisions/s)\n`,
  );
  console.log(
    '| clients | rows | table MiB | clients within window + sweep | rows ≤ bound | RSS MiB |',
  );
  console.log('|---:|---:|---:|---:|---|---:|');
  for (const s of run.samples) {
    console.log(
      `| ${s.clients.toLocaleString('en')} | ${s.rows.toLocaleString('en')} | ${s.bytes === undefined ? '–' : mib(s.bytes)} | ${s.boundClients.toLocaleString('en')} | ${s.rows <= s.boundClients ? 'yes' : '**no**'} | ${mib(s.rssBytes)} |`,
    );
  }
}

async function main(): Promise<void> {
  const database = `bench_rate_limit_rows_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: `${SERVER_URL}/postgres` });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  const probe = new pg.Client({ connectionString: `${SERVER_URL}/${database}` });
  try {
    const shared = await openPostgresRateLimiter({
      url: `${SERVER_URL}/${database}`,
      service: 'bench',
      limits: LIMITS,
    });
    await probe.connect();
    try {
      print(
        'Shared limiter (PostgreSQL)',
        await drive(shared, async () => {
          const { rows } = await probe.query<{ n: number; bytes: number }>(
            "SELECT count(*)::int AS n, pg_total_relation_size('rate_limits')::float8 AS bytes FROM rate_limits",
          );
          return { rows: Number(rows[0]?.n), bytes: Number(rows[0]?.bytes) };
        }),
      );
    } finally {
      await shared.close();
      await probe.end();
    }
    // The in-process limiter's table for reads, as inProcessLimiter() makes it, so that its rows
    // can be counted.
    const table = new GcraTable(LIMITS.reads as NonNullable<RateLimits['reads']>, () =>
      performance.now(),
    );
    const local: RateLimiter = {
      decide: (_kind, client) => table.decide(client),
      close: () => Promise.resolve(),
    };
    print('In-process limiter', await drive(local, () => Promise.resolve({ rows: table.size })));
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
  }
}

await main();
