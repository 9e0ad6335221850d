// `npm run bench`'s report: one table (each scenario's servers, req/s and p50/p99 at each
// concurrency, peak memory, instructions per request), then the issue's targets, each with its
// figure and whether it was met.
import { describeBuildText, type Build } from './build.js';
import type { IdleCost } from './idle-connections.js';
import {
  renderInstructionTable,
  type InstructionResults,
  type InstructionRow,
} from './instruction-count.js';
import { LIMITS_RATIO_MIN } from './limits-ratio.js';
import type { PostgresOutcome } from './postgres-part.js';
import type { Machine } from './results.js';
import type { Figures, RoundPlan } from './rounds.js';
import {
  CONCURRENCIES,
  IDLE_CONNECTION_BYTES_MAX,
  PEAK_RSS_MAX_BYTES,
  PGBENCH_RATIO_MIN,
  POSTGRES_CONNECTIONS,
  type Scenario,
} from './scenarios.js';

export interface ServerResult {
  readonly label: 'ours' | 'bare node:http' | 'Fastify 5 peer' | 'bare node:http + SQLite';
  /** One per concurrency, in CONCURRENCIES' order. */
  readonly figures: readonly Figures[];
  readonly peakRss_bytes: number | undefined;
}

export interface ScenarioResult {
  readonly scenario: Scenario;
  /** Why the servers' single answers differ, if they do (the run then fails). */
  readonly mismatch: string | undefined;
  readonly servers: readonly ServerResult[];
}

export interface Report {
  readonly date: string;
  readonly quick: boolean;
  readonly machine: Machine;
  readonly build: Build | undefined;
  readonly plan: RoundPlan;
  readonly postgresPlan: RoundPlan;
  readonly scenarios: readonly ScenarioResult[];
  readonly postgres: PostgresOutcome;
  readonly idle: { readonly ours: IdleCost; readonly bare: IdleCost } | undefined;
  /** The counts, or why there are none. */
  readonly instructions: InstructionResults | string;
}

const MiB = 1024 * 1024;
const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const thousands = (n: number): string => `${(n / 1000).toFixed(1)}k`;

function cell(f: Figures | undefined): string {
  if (f === undefined) return '–';
  const failed =
    f.wrongStatus > 0 || f.errors > 0
      ? ` **FAILED** (${f.wrongStatus} wrong status, ${f.errors} errors)`
      : '';
  return `${integer.format(f.requestsPerSec)} · ${f.p50_ms.toFixed(2)} / ${f.p99_ms.toFixed(2)}${failed}`;
}

/**
 * The instruction row of a scenario for a server: ours and bare from its own row, the peer and the
 * bare server writing to SQLite from the row that compares ours with them.
 */
function instructionsOf(
  rows: readonly InstructionRow[],
  scenario: string,
  label: ServerResult['label'],
): string {
  const against = (server: 'peer' | 'bare-sqlite'): InstructionRow | undefined =>
    rows.find((r) => r.scenario.peerOf === scenario && r.scenario.server === server);
  if (label === 'Fastify 5 peer' || label === 'bare node:http + SQLite') {
    const row = against(label === 'Fastify 5 peer' ? 'peer' : 'bare-sqlite');
    return row === undefined ? '–' : thousands(row.reference);
  }
  const row = rows.find((r) => r.scenario.peerOf === undefined && r.scenario.name === scenario);
  if (row === undefined) return '–';
  if (label !== 'ours') return thousands(row.reference);
  const sameJob = against('bare-sqlite');
  return `${thousands(row.ours)} (${row.ratio.toFixed(2)} × bare${sameJob === undefined ? '' : `, ${sameJob.ratio.toFixed(2)} × bare + SQLite`})`;
}

export function renderReport(report: Report): string {
  const { machine, plan } = report;
  const counts = typeof report.instructions === 'string' ? undefined : report.instructions;
  const lines: string[] = [];
  lines.push(`# Benchmark${report.quick ? ' (quick run)' : ''}`, '');
  lines.push(
    `${report.date} · ${machine.cores} cores, ${machine.cpuModel}, ${machine.memory_GiB} GiB · Node ${machine.node} · ${machine.os} · ${describeBuildText(report.build)}`,
    '',
    `Each cell: req/s · p50 / p99 latency in ms, at that many connections (autocannon on loopback; ${plan.rounds} round${plan.rounds === 1 ? '' : 's'} of ${plan.duration_s} s per server after ${plan.warmup_s} s to warm up, ` +
      'servers alternating; req/s the median of the rounds, latencies over every measured response). Our services run as shipped (SQLite, synchronous FULL, access log, ' +
      "/metrics and request ids on), each scenario on fresh processes; peak RSS is that process's high-water mark (VmHWM). Instr./req: instructions per request " +
      'under valgrind, every thread of the process (`npm run bench:instructions`, below; not counted for the keyed rows).',
    '',
    `| Scenario | Server | ${CONCURRENCIES.map((c) => `${c} conn${c === 1 ? '' : 's'}`).join(' | ')} | Peak RSS MB | Instr./req |`,
    `|---|---|${CONCURRENCIES.map(() => '---:').join('|')}|---:|---:|`,
  );
  for (const s of report.scenarios) {
    s.servers.forEach((server, i) => {
      const name =
        i === 0
          ? `${s.scenario.name}${s.mismatch === undefined ? '' : ` **answers differ: ${s.mismatch}**`}`
          : '';
      const rss =
        server.peakRss_bytes === undefined ? '–' : (server.peakRss_bytes / MiB).toFixed(0);
      const instr =
        counts === undefined || s.scenario.request.idempotencyKey !== undefined
          ? '–'
          : instructionsOf(counts.rows, s.scenario.name, server.label);
      lines.push(
        `| ${name} | ${server.label} | ${server.figures.map(cell).join(' | ')} | ${rss} | ${instr} |`,
      );
    });
  }
  if ('rows' in report.postgres) {
    const at = CONCURRENCIES.indexOf(POSTGRES_CONNECTIONS);
    for (const row of report.postgres.rows) {
      const cells = CONCURRENCIES.map((_, i) => (i === at ? cell(row.figures) : ''));
      lines.push(`| ${row.scenario.name}, PostgreSQL | ours | ${cells.join(' | ')} | | |`);
      const ceiling =
        'unavailable' in row.ceiling
          ? row.ceiling.unavailable
          : `${integer.format(row.ceiling.transactionsPerSec)} tps`;
      lines.push(
        `| | pgbench, same statements | ${CONCURRENCIES.map((_, i) => (i === at ? ceiling : '')).join(' | ')} | | |`,
      );
    }
  }
  lines.push('');
  if ('limits' in report.postgres && report.postgres.limits.length > 0) {
    lines.push(
      `Limits held in PostgreSQL, no client over its limit, ${POSTGRES_CONNECTIONS} connections: req/s with limits off and on (servers alternating), and on ÷ off of each round.`,
      '',
      '| Scenario | Limits off | Limits on | On ÷ off, each round | Median |',
      '|---|---:|---:|---|---:|',
    );
    for (const row of report.postgres.limits)
      lines.push(
        `| ${row.scenario.name}, PostgreSQL | ${cell(row.off)} | ${cell(row.on)} | ${row.ratios.map((r) => r.toFixed(2)).join(', ')} | ${row.median.toFixed(2)} |`,
      );
    lines.push('');
  }
  if ('skipped' in report.postgres)
    lines.push(`PostgreSQL part skipped: ${report.postgres.skipped}`, '');

  lines.push('## Targets', '', '| Target | Measured | Met |', '|---|---|---|');
  const target = (text: string, measured: string, met: boolean | undefined): void =>
    void lines.push(
      `| ${text} | ${measured} | ${met === undefined ? 'not measured' : met ? 'met' : '**missed**'} |`,
    );
  if (counts === undefined) {
    target(
      '1–4: instructions per request (`npm run bench:instructions`)',
      `not counted: ${report.instructions as string}`,
      undefined,
    );
  } else {
    for (const r of counts.rows.filter((row) => row.scenario.informational !== true)) {
      target(
        `${r.scenario.name}: instructions per request ${r.target}`,
        `${thousands(r.ours)} against ${thousands(r.reference)}: ${r.ratio.toFixed(2)}`,
        r.mismatch === undefined ? r.met : false,
      );
    }
  }
  if ('rows' in report.postgres) {
    for (const row of report.postgres.rows) {
      const ratio =
        'unavailable' in row.ceiling
          ? undefined
          : row.figures.requestsPerSec / row.ceiling.transactionsPerSec;
      target(
        `${row.scenario.name}, PostgreSQL, ${POSTGRES_CONNECTIONS} connections: req/s ≥ ${PGBENCH_RATIO_MIN} × pgbench`,
        ratio === undefined ? 'no ceiling measured' : `${ratio.toFixed(2)} × pgbench`,
        ratio === undefined ? undefined : ratio >= PGBENCH_RATIO_MIN,
      );
    }
    for (const row of report.postgres.limits)
      target(
        `${row.scenario.name}, PostgreSQL, ${POSTGRES_CONNECTIONS} connections: limits held in PostgreSQL ≥ ${LIMITS_RATIO_MIN} × limits off`,
        `${row.median.toFixed(2)} (median of the rounds' on ÷ off: ${row.ratios.map((r) => r.toFixed(2)).join(', ')})`,
        row.median >= LIMITS_RATIO_MIN,
      );
  } else {
    target(`PostgreSQL: req/s ≥ ${PGBENCH_RATIO_MIN} × pgbench`, 'skipped', undefined);
  }
  const peaks = report.scenarios.flatMap((s) =>
    s.servers
      .filter((r) => r.label === 'ours' && r.peakRss_bytes !== undefined)
      .map((r) => ({ name: s.scenario.name, bytes: r.peakRss_bytes as number })),
  );
  const worst = peaks.reduce<{ name: string; bytes: number } | undefined>(
    (w, p) => (w === undefined || p.bytes > w.bytes ? p : w),
    undefined,
  );
  target(
    `peak RSS ≤ ${PEAK_RSS_MAX_BYTES / MiB} MB in every scenario`,
    worst === undefined ? 'not read' : `worst ${(worst.bytes / MiB).toFixed(0)} MB (${worst.name})`,
    worst === undefined ? undefined : worst.bytes <= PEAK_RSS_MAX_BYTES,
  );
  if (report.idle !== undefined) {
    const { ours, bare } = report.idle;
    target(
      `bytes per idle connection ≤ ${IDLE_CONNECTION_BYTES_MAX / 1024} KB`,
      `${(ours.bytesPerConnection / 1024).toFixed(1)} KB (bare node:http ${(bare.bytesPerConnection / 1024).toFixed(1)} KB; resident memory growth over ${ours.connections} connections, each answered once, then idle)`,
      ours.bytesPerConnection <= IDLE_CONNECTION_BYTES_MAX,
    );
  }
  lines.push('');
  if (counts !== undefined)
    lines.push('## Instructions per request', '', renderInstructionTable(counts));
  lines.push('Reproduce with `npm run bench` (bench/README.md says what each figure means).', '');
  return lines.join('\n');
}
