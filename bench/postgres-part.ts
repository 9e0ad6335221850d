// The same scenarios on the PostgreSQL store, with one instance and with two instances sharing one
// fresh database (the connections split over both), and pgbench's ceiling for the same statements
// (pgbench.ts) on the same database.
// Skipped, with the reason, when PostgreSQL cannot be reached or the service refuses postgres://.
import type { ServerProcess } from './processes.js';
import type { ScenarioResult } from './results.js';
import type { RoundPlan, Subject } from './rounds.js';
import type { BaselineRole, Scenario, ServiceRole } from './scenarios.js';
import { POSTGRES_POOL_SIZE } from '../src/db/postgres.js';
import { measureCeiling, type Ceiling } from './pgbench.js';
import { runScenario } from './scenario-run.js';
import { startService } from './servers.js';

/** The server, without a database name; BENCH_POSTGRES_URL overrides it. */
const DEFAULT_SERVER_URL = 'postgres://postgres@127.0.0.1:5432';
const CONNECT_TIMEOUT_MS = 3000;

export type PostgresOutcome = { readonly scenarios: ScenarioResult[] } | { readonly skipped: string };

interface Admin {
  query(sql: string): Promise<unknown>;
  end(): Promise<void>;
}

async function connectAdmin(serverUrl: string): Promise<Admin> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: `${serverUrl}/postgres`, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  await client.connect();
  return client;
}

export async function runPostgresPart(
  scenariosToRun: readonly Scenario[],
  baselines: Readonly<Record<BaselineRole, ServerProcess>>,
  plan: RoundPlan,
  log: (line: string) => void,
): Promise<PostgresOutcome> {
  const serverUrl = (process.env.BENCH_POSTGRES_URL ?? DEFAULT_SERVER_URL).replace(/\/+$/, '');
  const database = `bench_${process.pid}_${Date.now()}`;
  let admin: Admin;
  try {
    admin = await connectAdmin(serverUrl);
    await admin.query(`CREATE DATABASE ${database}`);
  } catch (error) {
    return { skipped: `PostgreSQL is unreachable or refused a new database (${describe(error)}).` };
  }
  const db = `${serverUrl}/${database}`;
  const started: ServerProcess[] = [];
  try {
    const instances: Record<ServiceRole, ServerProcess[]> = { todo: [], 'todo-no-access-log': [], bank: [], 'bank-unified': [], 'bank-problem': [] };
    try {
      // One after another: the first instance of each creates the schema, the second finds it.
      for (let n = 1; n <= 2; n++) {
        for (const role of ['todo', 'bank', 'bank-unified'] as const) {
          const server = await startService(`${role} postgres #${n}`, role === 'todo' ? 'todo' : 'bank', db, role === 'bank-unified' ? ['--errors', 'unified'] : []);
          started.push(server);
          instances[role].push(server);
        }
      }
    } catch (error) {
      return { skipped: `the service did not start on --db postgres:// (${describe(error)}).` };
    }
    const scenarios: ScenarioResult[] = [];
    for (const scenario of scenariosToRun.filter((s) => s.sqliteOnly !== true)) {
      log(`postgres: ${scenario.name}`);
      const servers = instances[scenario.service];
      const label = `${scenario.service === 'todo' ? 'to-do' : scenario.service === 'bank' ? 'bank' : 'bank unified'} · PostgreSQL`;
      const one: Subject = { label: `${label} ×1`, servers: servers.slice(0, 1) };
      const two: Subject = { label: `${label} ×2`, servers };
      const baseline: Subject = { label: baselineLabel(scenario.baseline), servers: [baselines[scenario.baseline]] };
      const result = await runScenario(
        'postgres',
        scenario,
        [
          { kind: 'service', subject: one },
          { kind: 'service', subject: two },
          { kind: 'baseline', subject: baseline },
        ],
        plan,
      );
      scenarios.push(scenario.pgbenchScript === undefined ? result : withCeiling(result, await ceilingOf(db, scenario.pgbenchScript, plan, log)));
    }
    return { scenarios };
  } finally {
    await Promise.all(started.map((s) => s.stop()));
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
    await admin.end().catch(() => undefined);
  }
}

async function ceilingOf(db: string, script: string, plan: RoundPlan, log: (line: string) => void): Promise<Ceiling | { unavailable: string }> {
  log(`postgres: pgbench ceiling, ${POSTGRES_POOL_SIZE} clients`);
  try {
    return await measureCeiling(db, script, { rounds: plan.rounds, duration_s: plan.duration_s, clients: POSTGRES_POOL_SIZE });
  } catch (error) {
    return { unavailable: `pgbench failed: ${describe(error)}` };
  }
}

function withCeiling(result: ScenarioResult, ceiling: Ceiling | { unavailable: string }): ScenarioResult {
  if ('unavailable' in ceiling) return { ...result, ceiling };
  const rows = result.rows.map((row) => (row.kind === 'service' ? { ...row, ceilingRatio: row.requestsPerSec / ceiling.transactionsPerSec } : row));
  return { ...result, rows, ceiling };
}

export function baselineLabel(role: BaselineRole): string {
  return role === 'baseline' ? 'baseline' : role === 'baseline-unified' ? 'baseline (unified)' : 'baseline (problem)';
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
