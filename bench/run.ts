// `npm run bench`: our services (the built CLI, SQLite in a fresh temporary directory) and a bare
// node:http baseline, each in its own process, driven in one run with autocannon on loopback; then
// the same on PostgreSQL when it is there. Prints the table, writes bench/results/. `--quick` makes
// fewer and shorter rounds; `--skip-postgres` leaves the PostgreSQL part out; `--only TEXT` measures
// only the scenarios whose name contains TEXT, where a PostgreSQL scenario is named with
// " (PostgreSQL)" after it, as in the table (so `--only "(PostgreSQL)"` runs the PostgreSQL part alone).
// Between the two, the server-bound part measures the scenarios with a baseline target again, each
// server pinned to one core and wrk to the other (bench/server-bound.ts); `--skip-server-bound`
// leaves it out, and a machine without wrk or taskset skips it and says why.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sendOnce } from './answers.js';
import { describeBuild } from './build.js';
import { baselineLabel, runPostgresPart } from './postgres-part.js';
import type { ServerProcess } from './processes.js';
import { renderReport } from './report.js';
import { describeMachine, writeResults, type BenchResults, type ScenarioResult } from './results.js';
import type { RoundPlan } from './rounds.js';
import { runScenario, type Participant } from './scenario-run.js';
import { CONNECTIONS, SCENARIOS, type BaselineRole, type ServiceRole } from './scenarios.js';
import { startBaseline, startService } from './servers.js';
import {
  runServerBoundPart,
  serverBoundUnavailable,
  type ServerBoundParticipant,
  type ServerBoundScenario,
} from './server-bound.js';
import { checkServerBoundTargets, checkTargets } from './targets.js';

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    'skip-postgres': { type: 'boolean', default: false },
    'skip-server-bound': { type: 'boolean', default: false },
    only: { type: 'string' },
  },
});
const chosen = (name: string): boolean => flags.only === undefined || name.includes(flags.only);
const sqliteScenarios = SCENARIOS.filter((s) => chosen(s.name));
const postgresScenarios = SCENARIOS.filter((s) => chosen(`${s.name} (PostgreSQL)`));
const quick = flags.quick === true;
const SQLITE_PLAN: RoundPlan = quick
  ? { rounds: 2, duration_s: 1, warmup_s: 1, connections: CONNECTIONS }
  : { rounds: 7, duration_s: 2, warmup_s: 1, connections: CONNECTIONS };
const POSTGRES_PLAN: RoundPlan = quick
  ? { rounds: 1, duration_s: 1, warmup_s: 1, connections: CONNECTIONS }
  : { rounds: 3, duration_s: 2, warmup_s: 1, connections: CONNECTIONS };

const SERVER_BOUND_PLAN: RoundPlan = quick
  ? { rounds: 2, duration_s: 1, warmup_s: 1, connections: CONNECTIONS }
  : { rounds: 7, duration_s: 2, warmup_s: 1, connections: CONNECTIONS };

const log = (line: string): void => void process.stderr.write(`bench: ${line}\n`);
const SERVICE_LABELS: Record<ServiceRole, string> = {
  todo: 'to-do · SQLite',
  'todo-no-access-log': 'to-do · SQLite, no access log',
  bank: 'bank · SQLite FULL',
  'bank-unified': 'bank unified · SQLite',
  'bank-problem': 'bank problem · SQLite',
};

async function main(): Promise<number> {
  const started = Date.now();
  // Read before anything is measured: the code under test is the code checked out now.
  const build = describeBuild(new URL('../../', import.meta.url));
  const dir = mkdtempSync(join(tmpdir(), 'status-services-bench-'));
  const running: ServerProcess[] = [];
  const keep = (server: ServerProcess): ServerProcess => (running.push(server), server);
  try {
    log('starting servers');
    const services: Record<ServiceRole, ServerProcess> = {
      todo: keep(await startService('todo', 'todo', `sqlite:${join(dir, 'todo.sqlite')}`)),
      'todo-no-access-log': keep(await startService('todo-no-access-log', 'todo', `sqlite:${join(dir, 'todo-quiet.sqlite')}`, ['--access-log', 'off'])),
      bank: keep(await startService('bank', 'bank', `sqlite:${join(dir, 'bank.sqlite')}`)),
      'bank-unified': keep(await startService('bank-unified', 'bank', `sqlite:${join(dir, 'bank-unified.sqlite')}`, ['--errors', 'unified'])),
      'bank-problem': keep(await startService('bank-problem', 'bank', `sqlite:${join(dir, 'bank-problem.sqlite')}`, ['--errors', 'problem'])),
    };
    const bankSyncOff = keep(await startService('bank-sync-off', 'bank', `sqlite:${join(dir, 'bank-off.sqlite')}`, ['--sqlite-synchronous', 'off']));
    // The baseline serves the very bytes our service serves for the document.
    const openapiFile = join(dir, 'openapi.json');
    writeFileSync(openapiFile, (await sendOnce(services.todo.url, { method: 'GET', path: '/openapi.json' })).body);
    const baselines: Record<BaselineRole, ServerProcess> = {
      baseline: keep(await startBaseline('baseline', 'default', openapiFile)),
      'baseline-unified': keep(await startBaseline('baseline-unified', 'unified', openapiFile)),
      'baseline-problem': keep(await startBaseline('baseline-problem', 'problem', openapiFile)),
    };
    const baselineTurnEnd = keep(await startBaseline('baseline-turn-end', 'default', openapiFile, ['--turn-end-writes']));

    const scenarios: ScenarioResult[] = [];
    for (const scenario of sqliteScenarios) {
      log(`sqlite: ${scenario.name}`);
      const participants: Participant[] = [{ kind: 'service', subject: { label: SERVICE_LABELS[scenario.service], servers: [services[scenario.service]] } }];
      if (scenario.syncOffRatioMin !== undefined) {
        participants.push({ kind: 'reference', subject: { label: 'bank · SQLite OFF', servers: [bankSyncOff] } });
      }
      participants.push({ kind: 'baseline', subject: { label: baselineLabel(scenario.baseline), servers: [baselines[scenario.baseline]] } });
      if (scenario.turnEndBaseline === true) {
        participants.push({ kind: 'baseline-turn-end', subject: { label: 'baseline, answers at turn end', servers: [baselineTurnEnd] } });
      }
      scenarios.push(await runScenario('sqlite', scenario, participants, SQLITE_PLAN));
    }

    let serverBound: ServerBoundScenario[] = [];
    let serverBoundSkipped: string | undefined = flags['skip-server-bound'] === true ? '--skip-server-bound was given.' : await serverBoundUnavailable();
    let serverBoundFailed: string | undefined;
    const withTarget = sqliteScenarios.filter((s) => s.baselineRatioMin !== undefined);
    if (serverBoundSkipped === undefined && withTarget.length === 0) serverBoundSkipped = 'no chosen scenario has a target against the baseline.';
    if (serverBoundSkipped === undefined) {
      try {
        serverBound = await runServerBoundPart(
          withTarget.map((scenario) => {
            const participants: ServerBoundParticipant[] = [
              { kind: 'service', label: SERVICE_LABELS[scenario.service], server: services[scenario.service] },
              { kind: 'baseline', label: baselineLabel(scenario.baseline), server: baselines[scenario.baseline] },
            ];
            if (scenario.turnEndBaseline === true) participants.push({ kind: 'baseline-turn-end', label: 'baseline, answers at turn end', server: baselineTurnEnd });
            return { scenario, participants };
          }),
          SERVER_BOUND_PLAN,
          log,
        );
      } catch (error) {
        // What was measured before is still written; the run fails.
        serverBoundFailed = error instanceof Error ? error.message : String(error);
        log(`server-bound part FAILED: ${serverBoundFailed}`);
      }
    } else {
      log(`server-bound part skipped: ${serverBoundSkipped}`);
    }
    for (const server of [...Object.values(services), bankSyncOff]) await server.stop();

    let postgresSkipped: string | undefined = '--skip-postgres was given.';
    // The baselines are measured again on PostgreSQL: not while they may still be pinned to one core.
    if (serverBoundFailed !== undefined && flags['skip-postgres'] !== true) postgresSkipped = 'the server-bound part failed, and the baselines may still be pinned to one core.';
    else if (flags['skip-postgres'] !== true) {
      const outcome = await runPostgresPart(postgresScenarios, baselines, POSTGRES_PLAN, log);
      if ('skipped' in outcome) {
        postgresSkipped = outcome.skipped;
        log(`postgres part skipped: ${outcome.skipped}`);
      } else {
        postgresSkipped = undefined;
        scenarios.push(...outcome.scenarios);
      }
    }

    const results: BenchResults = {
      date: new Date().toISOString(),
      quick,
      machine: describeMachine(),
      build,
      plan: { sqlite: SQLITE_PLAN, postgres: POSTGRES_PLAN, serverBound: SERVER_BOUND_PLAN },
      scenarios,
      serverBound,
      targets: [...checkTargets(scenarios), ...checkServerBoundTargets(serverBound)],
      postgresSkipped,
      serverBoundSkipped,
      serverBoundFailed,
    };
    const report = renderReport(results);
    process.stdout.write(report);
    const elapsed_s = ((Date.now() - started) / 1000).toFixed(0);
    // A run of a few scenarios is for looking into one thing: it does not replace the recorded results.
    if (flags.only === undefined) log(`wrote bench/results/${writeResults(results, report)} and bench/results/latest.md in ${elapsed_s} s`);
    else log(`--only: nothing written (${elapsed_s} s)`);
    const failed = scenarios.some((s) => s.rows.some((r) => !r.ok)) || serverBound.some((s) => s.rows.some((r) => !r.ok));
    if (failed) log('FAILED: some answers had an unexpected status or were errors (see the table)');
    if (failed || serverBoundFailed !== undefined) return 1;
    return 0;
  } finally {
    await Promise.all(running.map((server) => server.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
