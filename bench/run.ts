// `npm run bench`: what a user would ask of the two services, beside a bare node:http server doing
// the same job, in one run and one table (bench/README.md reads it):
//   - each scenario's req/s and p50/p99 latency at 1, 10 and 50 connections (SQLite, as shipped),
//     the bare server's beside it, and a Fastify 5 peer's for GET /todos/1; each scenario on fresh
//     server processes, so that the peak memory (VmHWM) shown is that scenario's;
//   - the instructions per request (bench/instruction-count.ts, under valgrind): the judged part;
//   - on PostgreSQL, creates and hot-row withdrawals against pgbench running the same statements,
//     and reads and withdrawals with limits held in PostgreSQL against limits off;
//   - the memory an idle connection holds.
// req/s and latency move with the machine's state (±20–30 % on a shared two-core machine); the
// instruction counts do not, and the targets on speed are judged on them.
//
//   npm run bench                         about 14–16 minutes
//   npm run bench -- --quick              shorter rounds, fewer counted requests: about 8 minutes
//   npm run bench -- --only withdraw      the scenarios whose name holds the text
//   npm run bench -- --skip-instructions  without valgrind's counts
//   npm run bench -- --skip-postgres
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { responsesDiffer, sendOnce } from './responses.js';
import { describeBuild } from './build.js';
import { callgrindMissing } from './callgrind.js';
import { COLLECTABLE, idleConnectionCost, type IdleCost } from './idle-connections.js';
import { countInstructions, DEFAULT_PLAN, type InstructionResults } from './instruction-count.js';
import { runPostgresPart, type PostgresOutcome } from './postgres-part.js';
import type { ServerProcess } from './processes.js';
import { renderReport, type ScenarioResult, type ServerResult } from './report.js';
import { describeMachine, resultsFolder, runStamp } from './results.js';
import { measureAt, type Figures, type RoundPlan } from './rounds.js';
import { CONCURRENCIES, SCENARIOS } from './scenarios.js';
import { startBaseline, startPeer, startService } from './servers.js';

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    'skip-postgres': { type: 'boolean', default: false },
    'skip-instructions': { type: 'boolean', default: false },
    only: { type: 'string' },
  },
});
const quick = flags.quick === true;
const PLAN: RoundPlan = quick
  ? { rounds: 1, duration_s: 1, warmup_s: 0.5 }
  : { rounds: 2, duration_s: 2, warmup_s: 1 };
const POSTGRES_PLAN: RoundPlan = quick
  ? { rounds: 1, duration_s: 2, warmup_s: 1 }
  : { rounds: 3, duration_s: 3, warmup_s: 1 };
/** Limits off against on is judged on the median of its rounds' ratios: as many as `npm run bench:rate-limits` takes. */
const LIMITS_PLAN: RoundPlan = quick ? POSTGRES_PLAN : { rounds: 5, duration_s: 3, warmup_s: 1 };
const chosen = SCENARIOS.filter((s) => flags.only === undefined || s.name.includes(flags.only));

const started = Date.now();
const log = (line: string): void =>
  void process.stderr.write(
    `bench: ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s  ${line}\n`,
  );

async function measureScenario(
  scenario: (typeof SCENARIOS)[number],
  dir: string,
  n: number,
): Promise<ScenarioResult> {
  const servers: { label: ServerResult['label']; server: ServerProcess }[] = [];
  try {
    servers.push({
      label: 'ours',
      server: await startService(
        `${scenario.service} #${n}`,
        scenario.service,
        `sqlite:${join(dir, `${n}.sqlite`)}`,
      ),
    });
    servers.push({ label: 'bare node:http', server: await startBaseline(`baseline #${n}`) });
    if (scenario.name === 'GET /todos/1')
      servers.push({
        label: 'Fastify 5 peer',
        server: await startPeer(`peer #${n}`, join(dir, `${n}-peer.sqlite`)),
      });
    // A durable write beside the same job done by hand: the bare server writing to SQLite.
    if (scenario.durable === true)
      servers.push({
        label: 'bare node:http + SQLite',
        server: await startBaseline(`baseline + SQLite #${n}`, [
          '--db',
          join(dir, `${n}-bare.sqlite`),
        ]),
      });
    // The same answer from each, or the comparison would be between different work.
    const bare = await sendOnce(
      (servers[1] as { server: ServerProcess }).server.url,
      scenario.request,
    );
    let mismatch: string | undefined;
    for (const { label, server } of servers) {
      if (label === 'bare node:http') continue;
      mismatch ??= responsesDiffer(
        await sendOnce(server.url, scenario.request),
        bare,
        scenario.expectedStatus,
        scenario.bodyCheck,
      );
    }
    const figures: Figures[][] = servers.map(() => []);
    for (const connections of CONCURRENCIES) {
      log(`${scenario.name}: ${connections} connection${connections === 1 ? '' : 's'}`);
      const measured = await measureAt(
        servers.map((s) => s.server),
        scenario.request,
        scenario.expectedStatus,
        connections,
        PLAN,
      );
      measured.forEach((f, i) => figures[i]?.push(f));
    }
    return {
      scenario,
      mismatch,
      servers: servers.map(({ label, server }, i) => ({
        label,
        figures: figures[i] as Figures[],
        peakRss_bytes: server.peakRssBytes(),
      })),
    };
  } finally {
    await Promise.all(servers.map((s) => s.server.stop()));
  }
}

async function measureIdleConnections(dir: string): Promise<{ ours: IdleCost; bare: IdleCost }> {
  log('idle connections');
  let n = 0;
  const ours = await idleConnectionCost(
    () =>
      startService(
        'todo idle',
        'todo',
        `sqlite:${join(dir, `idle-${++n}.sqlite`)}`,
        // 4,000 connections from one address, as no client holds: the bound of one is lifted.
        ['--connections-per-client', '0'],
        COLLECTABLE,
      ),
    '/todos/1',
  );
  const bare = await idleConnectionCost(
    () => startBaseline('baseline idle', [], COLLECTABLE),
    '/todos/1',
  );
  return { ours, bare };
}

async function main(): Promise<number> {
  // Read before anything is measured: the code under test is the code checked out now.
  const build = describeBuild(new URL('../../', import.meta.url));
  const out = resultsFolder(`bench-${runStamp()}${quick ? '-quick' : ''}`);
  const dir = mkdtempSync(join(tmpdir(), 'status-services-bench-'));
  try {
    const scenarios: ScenarioResult[] = [];
    for (const [i, scenario] of chosen.entries())
      scenarios.push(await measureScenario(scenario, dir, i + 1));
    const idle = flags.only === undefined ? await measureIdleConnections(dir) : undefined;

    let postgres: PostgresOutcome = { skipped: '--skip-postgres was given.' };
    if (flags['skip-postgres'] !== true)
      postgres = await runPostgresPart(
        chosen,
        { ceilings: POSTGRES_PLAN, limits: LIMITS_PLAN },
        log,
      );
    if ('skipped' in postgres) log(`postgres part skipped: ${postgres.skipped}`);

    let instructions: InstructionResults | string = '--skip-instructions was given.';
    const missing = callgrindMissing();
    if (flags['skip-instructions'] !== true && missing !== undefined) instructions = missing;
    else if (flags['skip-instructions'] !== true) {
      const plan = quick ? { ...DEFAULT_PLAN, processes: 1, warmup: 6000 } : DEFAULT_PLAN;
      instructions = await countInstructions(
        { ...plan, only: flags.only },
        resultsFolder(`${out.slice(out.lastIndexOf('/') + 1)}/instructions`),
        (line) => log(`instructions: ${line}`),
      );
    }
    if (typeof instructions === 'string') log(`instruction counts skipped: ${instructions}`);

    const report = renderReport({
      date: new Date().toISOString(),
      quick,
      machine: describeMachine(),
      build,
      plan: PLAN,
      postgresPlan: POSTGRES_PLAN,
      scenarios,
      postgres,
      idle,
      instructions,
    });
    process.stdout.write(report);
    writeFileSync(join(out, 'report.md'), report);
    writeFileSync(
      join(out, 'results.json'),
      `${JSON.stringify({ build, scenarios, postgres, idle, instructions }, null, 2)}\n`,
    );
    log(
      `wrote bench/results/${out.slice(out.lastIndexOf('/') + 1)}/ in ${((Date.now() - started) / 1000).toFixed(0)} s`,
    );
    const failed =
      scenarios.some(
        (s) =>
          s.mismatch !== undefined ||
          s.servers.some((r) => r.figures.some((f) => f.wrongStatus > 0 || f.errors > 0)),
      ) ||
      ('rows' in postgres &&
        [
          ...postgres.rows.map((r) => r.figures),
          ...postgres.limits.flatMap((r) => [r.off, r.on]),
        ].some((f) => f.wrongStatus > 0 || f.errors > 0)) ||
      (typeof instructions !== 'string' && instructions.rows.some((r) => r.mismatch !== undefined));
    if (failed)
      log(
        'FAILED: some answers had an unexpected status, were errors or differed from the bare server (see the table)',
      );
    return failed ? 1 : 0;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
