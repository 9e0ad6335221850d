// The ceiling of a scenario on PostgreSQL: pgbench (shipped with PostgreSQL) running the statements
// our service would run for one request, one request per transaction, on as many connections as the
// service's pool holds, against the same database in the same run. Our req/s ÷ this figure says how
// much batching buys over the one-transaction-per-request shape.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { median } from './stats.js';

const run = promisify(execFile);

export interface Ceiling {
  /** The statements, as pgbench ran them. */
  readonly script: string;
  readonly clients: number;
  /** Median over rounds of pgbench's transactions per second. */
  readonly transactionsPerSec: number;
}

export interface PgbenchPlan {
  readonly rounds: number;
  readonly duration_s: number;
  readonly clients: number;
}

/** Runs `script` with pgbench against `databaseUrl`; rejects when pgbench is missing or fails. */
export async function measureCeiling(
  databaseUrl: string,
  script: string,
  plan: PgbenchPlan,
): Promise<Ceiling> {
  const dir = mkdtempSync(join(tmpdir(), 'status-services-pgbench-'));
  try {
    const file = join(dir, 'script.sql');
    writeFileSync(file, `${script}\n`);
    const rounds: number[] = [];
    for (let round = 0; round < plan.rounds; round++) {
      // -n: no vacuum of pgbench's own tables (there are none); -M prepared: the fastest way pgbench
      // can send them, so the ceiling is not lowered by parsing that our service might skip.
      const args = [
        '-n',
        '-M',
        'prepared',
        '-c',
        String(plan.clients),
        '-j',
        String(Math.min(plan.clients, 2)),
        '-T',
        String(plan.duration_s),
        '-f',
        file,
        databaseUrl,
      ];
      const { stdout } = await run('pgbench', args, { encoding: 'utf8' });
      const tps = /tps = ([\d.]+)/.exec(stdout)?.[1];
      if (tps === undefined) throw new Error(`pgbench printed no tps: ${stdout.slice(-300)}`);
      rounds.push(Number(tps));
    }
    return { script, clients: plan.clients, transactionsPerSec: median(rounds) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
