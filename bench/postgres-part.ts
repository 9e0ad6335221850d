// The PostgreSQL part: the scenarios that have pgbench statements, on one fresh database, our
// service at POSTGRES_CONNECTIONS connections against pgbench's ceiling for the same statements
// (pgbench.ts) in the same run; then what limits held in PostgreSQL cost (limits-ratio.ts).
// Skipped, with the reason, when PostgreSQL cannot be reached or the service refuses postgres://.
import { POSTGRES_POOL_SIZE } from '../src/db/postgres/postgres.js';
import { measureLimitsRatio, type LimitsRow } from './limits-ratio.js';
import { measureCeiling } from './pgbench.js';
import type { ServerProcess } from './processes.js';
import { measureAt, type Figures, type RoundPlan } from './rounds.js';
import { POSTGRES_CONNECTIONS, type Scenario } from './scenarios.js';
import { startService } from './servers.js';

/** The server, without a database name; BENCH_POSTGRES_URL overrides it. */
const DEFAULT_SERVER_URL = 'postgres://postgres@127.0.0.1:5432';
const CONNECT_TIMEOUT_MS = 3000;

export interface PostgresRow {
  readonly scenario: Scenario;
  readonly figures: Figures;
  /** pgbench's transactions per second (median over rounds), or why there is none. */
  readonly ceiling:
    | { readonly transactionsPerSec: number; readonly clients: number }
    | { readonly unavailable: string };
}

export type PostgresOutcome =
  { readonly rows: PostgresRow[]; readonly limits: LimitsRow[] } | { readonly skipped: string };

export async function runPostgresPart(
  scenarios: readonly Scenario[],
  plans: { readonly ceilings: RoundPlan; readonly limits: RoundPlan },
  log: (line: string) => void,
): Promise<PostgresOutcome> {
  const serverUrl = (process.env.BENCH_POSTGRES_URL ?? DEFAULT_SERVER_URL).replace(/\/+$/, '');
  const database = `bench_${process.pid}_${Date.now()}`;
  const { default: pg } = await import('pg');
  const admin = new pg.Client({
    connectionString: `${serverUrl}/postgres`,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  });
  try {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
  } catch (error) {
    await admin.end().catch(() => undefined);
    return { skipped: `PostgreSQL is unreachable or refused a new database (${describe(error)}).` };
  }
  const db = `${serverUrl}/${database}`;
  const started: ServerProcess[] = [];
  try {
    const services: Partial<Record<Scenario['service'], ServerProcess>> = {};
    try {
      for (const service of ['todo', 'bank'] as const) {
        const server = await startService(`${service} postgres`, service, db);
        started.push(server);
        services[service] = server;
      }
    } catch (error) {
      return { skipped: `the service did not start on --db postgres:// (${describe(error)}).` };
    }
    const rows: PostgresRow[] = [];
    for (const scenario of scenarios) {
      if (scenario.pgbenchScript === undefined) continue;
      log(`postgres: ${scenario.name}`);
      const [figures] = await measureAt(
        [services[scenario.service] as ServerProcess],
        scenario.request,
        scenario.expectedStatus,
        POSTGRES_CONNECTIONS,
        plans.ceilings,
      );
      let ceiling: PostgresRow['ceiling'];
      try {
        log(`postgres: ${scenario.name}: pgbench, ${POSTGRES_POOL_SIZE} clients`);
        ceiling = await measureCeiling(db, scenario.pgbenchScript, {
          rounds: plans.ceilings.rounds,
          duration_s: plans.ceilings.duration_s,
          clients: POSTGRES_POOL_SIZE,
        });
      } catch (error) {
        ceiling = { unavailable: `pgbench failed: ${describe(error)}` };
      }
      rows.push({ scenario, figures: figures as Figures, ceiling });
    }
    await Promise.all(started.splice(0).map((s) => s.stop()));
    const limits = await measureLimitsRatio(db, scenarios, plans.limits, (line) =>
      log(`postgres: ${line}`),
    );
    return { rows, limits };
  } finally {
    await Promise.all(started.map((s) => s.stop()));
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
    await admin.end().catch(() => undefined);
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
