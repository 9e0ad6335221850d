// The results as Markdown: the machine, the plan, one table row per server and scenario, the
// targets, and how to reproduce. The same text is printed and written to bench/results/latest.md.
import { describeBuildText } from './build.js';
import type { BenchResults, Row, ScenarioResult } from './results.js';
import { medianRatio } from './rounds.js';
import { GENERATOR_CPU, SERVER_CPU, type ServerBoundRow, type ServerBoundScenario } from './server-bound.js';

const MiB = 1024 * 1024;
const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export function renderReport(results: BenchResults): string {
  const { machine, plan } = results;
  const lines: string[] = [];
  lines.push(`# Benchmark results${results.quick ? ' (quick run)' : ''}`, '');
  lines.push(
    `${results.date} · ${machine.cores} cores, ${machine.cpuModel}, ${machine.memory_GiB} GiB · Node ${machine.node} · ${machine.os} · ${describeBuildText(results.build)}`,
    '',
    `${plan.sqlite.connections} connections on loopback, autocannon in the bench process, each server a child process. ` +
      `SQLite part: ${plan.sqlite.rounds} rounds of ${plan.sqlite.duration_s} s per server after a ${plan.sqlite.warmup_s} s warm-up; ` +
      `PostgreSQL part: ${plan.postgres.rounds} rounds of ${plan.postgres.duration_s} s. ` +
      'req/s is the median over rounds; p50/p99 are over every measured response; × baseline is the median of per-round ratios; ' +
      'peak RSS is the process high-water mark (VmHWM) so far in the run; CPU µs/req is the CPU time (user and system, every thread) ' +
      'the server process used per response over the measured rounds, and × baseline CPU is the baseline\'s CPU per response ÷ that: ' +
      'the ratio the two would reach where the server, not the load generator, is the bottleneck. ' +
      "Server CPU and autocannon CPU are the server's and the bench process's CPU time over a round's length (median over rounds; " +
      '100 % is one core): who set the pace. autocannon near 100 % with the server below it: the generator did, and holds the two ' +
      'servers of a scenario together; the server near 100 %: the server did, and × baseline is close to × baseline CPU.',
    '',
    '| Scenario | Expected | Server | req/s | p50 ms | p99 ms | Peak RSS MB | × baseline | CPU µs/req | × baseline CPU | server CPU | autocannon CPU | × pgbench | Status |',
    '|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  );
  lines.push(...scenarioRows(results.scenarios, renderRow), '');
  if (results.postgresSkipped !== undefined) lines.push(`PostgreSQL part skipped: ${results.postgresSkipped}`, '');
  const mismatches = results.scenarios.filter((s) => s.answerMismatch !== undefined);
  for (const s of mismatches) lines.push(`- ${s.name} (${s.part}): FAILED before load, ${s.answerMismatch}`);
  if (mismatches.length > 0) lines.push('');
  const ceilings = results.scenarios.filter((s) => s.ceiling !== undefined);
  if (ceilings.length > 0) {
    lines.push('× pgbench: req/s ÷ pgbench running the same statements, one request per transaction, on as many connections as the service pool holds, in the same run:', '');
    for (const s of ceilings) lines.push(`- ${s.name}: ${describeCeiling(s)}`);
    lines.push('');
  }
  const againstTurnEnd = results.scenarios.flatMap((s) => {
    const service = s.rows.find((r) => r.kind === 'service');
    const turnEnd = s.rows.find((r) => r.kind === 'baseline-turn-end');
    return service === undefined || turnEnd === undefined ? [] : [{ name: s.name, service, turnEnd }];
  });
  if (againstTurnEnd.length > 0) {
    lines.push('Against the baseline that writes its answers at the end of the turn, as the services do (what our layers cost; no target):', '');
    for (const { name, service, turnEnd } of againstTurnEnd) {
      const cpu = service.cpu_us_per_response === undefined || turnEnd.cpu_us_per_response === undefined ? '–' : (turnEnd.cpu_us_per_response / service.cpu_us_per_response).toFixed(2);
      lines.push(`- ${name}: ${medianRatio(service, turnEnd).toFixed(2)} × its req/s (median of per-round ratios), ${cpu} × its CPU per response`);
    }
    lines.push('');
  }
  lines.push(...renderServerBound(results), '');
  lines.push('## Targets', '', '| Target | Measured | Holds |', '|---|---|---|');
  for (const t of results.targets) lines.push(`| ${t.target} | ${t.measured} | ${t.holds ? 'yes' : '**no**'} |`);
  lines.push('', 'Reproduce with `npm run bench` (15–30 minutes with the PostgreSQL part) or `npm run bench -- --quick` (about 4 minutes).', '');
  return lines.join('\n');
}

function renderServerBound(results: BenchResults): string[] {
  const plan = results.plan.serverBound;
  const lines = ['## Server-bound', ''];
  if (results.serverBoundSkipped !== undefined) return [...lines, `Server-bound part skipped: ${results.serverBoundSkipped}`];
  if (results.serverBoundFailed !== undefined) lines.push(`**Server-bound part FAILED:** ${results.serverBoundFailed}`, '');
  lines.push(
    `The scenarios with a target against the baseline again, at another operating point: each server pinned to core ${SERVER_CPU} ` +
      `(every thread) and wrk (-t1, ${plan.connections} connections) with the bench pinned to core ${GENERATOR_CPU}; ${plan.rounds} rounds ` +
      `of ${plan.duration_s} s per server after a ${plan.warmup_s} s warm-up, alternating as above. Server CPU is the server's CPU time ` +
      "over the round's length (about 100 % when it used all of its core, so that it set the pace); wrk core busy is how busy the " +
      "other core was (time the hypervisor took is not busy). A service's statuses are read exactly from its own /metrics; a " +
      "baseline's only as wrk reports them, below 400 or not (the exact ones are checked above).",
    '',
    '| Scenario | Expected | Server | req/s | × baseline | CPU µs/req | server CPU | wrk core busy | Status |',
    '|---|---:|---|---:|---:|---:|---:|---:|---|',
  );
  lines.push(...scenarioRows(results.serverBound, renderServerBoundRow));
  return lines;
}

function renderServerBoundRow(scenario: ServerBoundScenario, row: ServerBoundRow, first: boolean): string {
  const cpu = row.cpu_us_per_response === undefined ? '–' : row.cpu_us_per_response.toFixed(0);
  const statuses = row.statusCounts === undefined ? '' : `; ${describeStatuses(row.statusCounts)}`;
  const status = row.ok ? 'ok' : `**FAILED** (${row.wrongStatus} wrong status, ${row.errors} errors${statuses})`;
  return `| ${first ? scenario.name : ''} | ${first ? scenario.expectedStatus : ''} | ${row.label} | ${integer.format(row.requestsPerSec)} | ${row.baselineRatio.toFixed(2)} | ${cpu} | ${percentOfCore(row.serverCpuShare)} | ${percentOfCore(row.generatorCoreBusy)} | ${status} |`;
}

function renderRow(scenario: ScenarioResult, row: Row, first: boolean): string {
  const name = first ? `${scenario.name}${scenario.part === 'postgres' ? ' (PostgreSQL)' : ''}` : '';
  const expected = first ? String(scenario.expectedStatus) : '';
  const rss = row.peakRss_bytes === undefined ? '–' : (row.peakRss_bytes / MiB).toFixed(0);
  const status = row.ok ? 'ok' : `**FAILED** ${describeFailure(scenario, row)}`;
  const ceiling = row.ceilingRatio === undefined ? '–' : row.ceilingRatio.toFixed(2);
  const cpu = row.cpu_us_per_response === undefined ? '–' : row.cpu_us_per_response.toFixed(0);
  const cpuRatio = row.cpuRatio === undefined ? '–' : row.cpuRatio.toFixed(2);
  // Results written before the shares were measured have neither.
  const serverShare = percentOfCore(row.serverCpuShare);
  const generatorShare = percentOfCore(row.generatorCpuShare as number | undefined);
  return `| ${name} | ${expected} | ${row.label} | ${integer.format(row.requestsPerSec)} | ${row.p50_ms.toFixed(2)} | ${row.p99_ms.toFixed(2)} | ${rss} | ${row.baselineRatio.toFixed(2)} | ${cpu} | ${cpuRatio} | ${serverShare} | ${generatorShare} | ${ceiling} | ${status} |`;
}

function describeCeiling(scenario: ScenarioResult): string {
  const ceiling = scenario.ceiling;
  if (ceiling === undefined) return 'none';
  if ('unavailable' in ceiling) return ceiling.unavailable;
  return `${integer.format(ceiling.transactionsPerSec)} transactions/s with ${ceiling.clients} clients, \`${ceiling.script.replace(/\n/g, ' ')}\``;
}

function describeFailure(scenario: ScenarioResult, row: Row): string {
  if (scenario.answerMismatch !== undefined) return '(answers differ)';
  return `(${row.wrongStatus} wrong status, ${row.errors} errors; ${describeStatuses(row.statusCounts)})`;
}

function percentOfCore(share: number | undefined): string {
  return share === undefined ? '–' : `${(share * 100).toFixed(0)} %`;
}

/** One table line per server of each scenario; the scenario's own cells go on its first line only. */
function scenarioRows<S extends { readonly rows: readonly R[] }, R>(scenarios: readonly S[], render: (scenario: S, row: R, first: boolean) => string): string[] {
  return scenarios.flatMap((scenario) => scenario.rows.map((row, i) => render(scenario, row, i === 0)));
}

function describeStatuses(counts: Readonly<Record<string, number>>): string {
  return Object.entries(counts)
    .map(([status, n]) => `${status}×${n}`)
    .join(' ');
}
