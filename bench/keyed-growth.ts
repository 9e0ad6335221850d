// `npm run bench:keyed-growth`: does a keyed write cost the same after a million keys are stored
// as after the first hundred thousand? Keyed withdrawals (POST /withdraw/alice/1) and keyed creates
// (POST /todos), each with a new Idempotency-Key, at 50 connections, on SQLite and on PostgreSQL
// (a fresh file or database per run, the service as shipped): after a warm-up, N writes in steps of
// 100,000, printing each step's req/s and the service's resident memory (VmRSS) after it. The
// figure judged is the last step's req/s ÷ the first's, and the memory at the end against after the
// first step: on a machine loaded by others absolute req/s move, but a ratio within one run, whose
// steps see about the same load, does not much.
//
//   npm run bench:keyed-growth                                    1,000,000 of each, both stores
//   npm run bench:keyed-growth -- --writes 300000 --only postgres --scenario withdraw
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { drive, FRESH_KEY, type BenchRequest } from './load.js';
import type { ServerProcess } from './processes.js';
import { startService } from './servers.js';

const { values: flags } = parseArgs({
  options: {
    writes: { type: 'string', default: '1000000' },
    step: { type: 'string', default: '100000' },
    warmup: { type: 'string', default: '20000' },
    connections: { type: 'string', default: '50' },
    only: { type: 'string' },
    scenario: { type: 'string' },
  },
});

const SERVER_URL = (process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(
  /\/+$/,
  '',
);
/** The targets of issue #44: the last step at least this share of the first, RSS at the end within this of after the first step, and under the cap. */
const RATIO_MIN = 0.9;
const RSS_GROWTH_MB_MAX = 10;
const RSS_MB_MAX = 150;

interface Scenario {
  readonly name: string;
  readonly service: 'todo' | 'bank';
  readonly request: BenchRequest;
  readonly expectedStatus: number;
}

const SCENARIOS: readonly Scenario[] = [
  {
    name: 'keyed withdraw',
    service: 'bank',
    request: { method: 'POST', path: '/withdraw/alice/1', idempotencyKey: FRESH_KEY },
    expectedStatus: 200,
  },
  {
    name: 'keyed create',
    service: 'todo',
    request: {
      method: 'POST',
      path: '/todos',
      body: '{"title":"Buy milk"}',
      contentType: 'application/json',
      idempotencyKey: FRESH_KEY,
    },
    expectedStatus: 201,
  },
];

function rssMb(pid: number): number {
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match === null ? Number.NaN : Number(match[1]) / 1024;
}

/** Settings of the server that matter to the figures, printed with them. */
async function postgresSettings(): Promise<string> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: `${SERVER_URL}/postgres` });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string; setting: string }>(
      "SELECT name, setting FROM pg_settings WHERE name IN ('autovacuum', 'server_version')",
    );
    return rows.map((row) => `${row.name}=${row.setting}`).join(', ');
  } finally {
    await client.end();
  }
}

async function withStore<T>(
  store: 'sqlite' | 'postgres',
  service: 'todo' | 'bank',
  body: (db: string) => Promise<T>,
): Promise<T> {
  if (store === 'sqlite') {
    const folder = await mkdtemp(join(tmpdir(), 'keyed-growth-'));
    try {
      return await body(`sqlite:${join(folder, `${service}.sqlite`)}`);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  }
  const { default: pg } = await import('pg');
  const admin = new pg.Client({ connectionString: `${SERVER_URL}/postgres` });
  await admin.connect();
  const database = `bench_keyed_growth_${process.pid}_${Date.now()}`;
  await admin.query(`CREATE DATABASE ${database}`);
  try {
    return await body(`${SERVER_URL}/${database}`);
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
  }
}

async function run(
  store: 'sqlite' | 'postgres',
  scenario: Scenario,
  writes: number,
  step: number,
  warmup: number,
  connections: number,
): Promise<string[]> {
  return withStore(store, scenario.service, async (db) => {
    const server: ServerProcess = await startService(
      `${scenario.name} on ${store}`,
      scenario.service,
      db,
    );
    const lines: string[] = [];
    const out = (line: string): void => {
      lines.push(line);
      process.stdout.write(`${line}\n`);
    };
    try {
      const check = async (amount: number): Promise<number> => {
        const figures = await drive(server.url, scenario.request, {
          connections,
          expectedStatus: scenario.expectedStatus,
          amount,
          timeout_s: 30,
        });
        if (figures.wrongStatus > 0 || figures.errors > 0)
          throw new Error(
            `${scenario.name} on ${store}: ${figures.wrongStatus} answers with another status, ${figures.errors} errors (${JSON.stringify(figures.statusCounts)})`,
          );
        return figures.requestsPerSec;
      };
      await check(warmup);
      out(
        `\n${scenario.name} on ${store}: ${writes.toLocaleString('en')} keyed writes at ${connections} connections after ${warmup.toLocaleString('en')} of warm-up`,
      );
      out('| keys stored after | req/s | ÷ first step | RSS MB |');
      out('|---:|---:|---:|---:|');
      let first: number | undefined;
      let rssFirst: number | undefined;
      let last = 0;
      let rss = 0;
      for (let done = 0; done < writes;) {
        const amount = Math.min(step, writes - done);
        last = await check(amount);
        done += amount;
        rss = rssMb(server.pid);
        first ??= last;
        rssFirst ??= rss;
        out(
          `| ${(warmup + done).toLocaleString('en')} | ${last.toFixed(0)} | ${(last / first).toFixed(2)} | ${rss.toFixed(1)} |`,
        );
      }
      const ratio = last / (first as number);
      const growth = rss - (rssFirst as number);
      out(
        `last ÷ first step: ${ratio.toFixed(2)} (target ≥ ${RATIO_MIN}: ${ratio >= RATIO_MIN ? 'met' : 'missed'}); RSS ${(rssFirst as number).toFixed(1)} → ${rss.toFixed(1)} MB, ` +
          `${growth >= 0 ? '+' : ''}${growth.toFixed(1)} MB (target within ${RSS_GROWTH_MB_MAX} MB and under ${RSS_MB_MAX} MB: ${Math.abs(growth) <= RSS_GROWTH_MB_MAX && rss < RSS_MB_MAX ? 'met' : 'missed'}); peak ${((server.peakRssBytes() ?? Number.NaN) / 1048576).toFixed(1)} MB`,
      );
      return lines;
    } finally {
      await server.stop();
    }
  });
}

async function main(): Promise<void> {
  const writes = Number(flags.writes);
  const step = Number(flags.step);
  const warmup = Number(flags.warmup);
  const connections = Number(flags.connections);
  for (const [name, value] of Object.entries({ writes, step, warmup, connections })) {
    if (!Number.isSafeInteger(value) || value < (name === 'warmup' ? 0 : 1))
      throw new Error(`--${name} must be a whole number`);
  }
  const stores = (['sqlite', 'postgres'] as const).filter(
    (store) => flags.only === undefined || store === flags.only,
  );
  const scenarios = SCENARIOS.filter(
    (scenario) => flags.scenario === undefined || scenario.name.includes(flags.scenario),
  );
  if (stores.includes('postgres'))
    process.stdout.write(`PostgreSQL: ${await postgresSettings()}\n`);
  for (const scenario of scenarios) {
    for (const store of stores) await run(store, scenario, writes, step, warmup, connections);
  }
}

await main();
