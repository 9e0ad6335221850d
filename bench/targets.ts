// The targets, checked against one run: req/s ratios to the baseline, durable writes
// against synchronous=OFF, p99 latency and peak memory of every service of the SQLite part; on
// PostgreSQL, req/s against pgbench's ceiling and the baseline, p99 latency, and two instances
// against one; the req/s ratios to the baseline again at the server-bound part's operating point.
import type { Row, ScenarioResult, TargetCheck } from './results.js';
import { LATENCY_P99_MAX_MS, PEAK_RSS_MAX_BYTES, POSTGRES_LATENCY_P99_MAX_MS, SCENARIOS } from './scenarios.js';
import { medianRatio } from './rounds.js';
import type { ServerBoundScenario } from './server-bound.js';

const MiB = 1024 * 1024;

export function checkTargets(scenarios: readonly ScenarioResult[]): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const sqlite = scenarios.filter((s) => s.part === 'sqlite');
  for (const scenario of sqlite) {
    const spec = SCENARIOS.find((s) => s.name === scenario.name);
    const service = scenario.rows.find((r) => r.kind === 'service');
    if (spec === undefined || service === undefined) continue;
    if (spec.baselineRatioMin !== undefined) {
      checks.push({
        target: `${scenario.name}: req/s ≥ ${spec.baselineRatioMin.toFixed(2)} × baseline`,
        measured: service.baselineRatio.toFixed(2),
        holds: service.baselineRatio >= spec.baselineRatioMin,
      });
    }
    const other = spec.relativeTo === undefined ? undefined : sqlite.find((s) => s.name === spec.relativeTo?.scenario);
    const otherService = other?.rows.find((r) => r.kind === 'service');
    if (spec.relativeTo !== undefined && otherService !== undefined) {
      // Each scenario's figure over its own baseline's, measured in the same alternating rounds: the
      // two scenarios run minutes apart, and a machine that slows down in between (other work, a
      // noisy neighbour) would otherwise move this ratio as much as the code does.
      const ratio = service.baselineRatio / otherService.baselineRatio;
      checks.push({
        target: `${scenario.name}: req/s ≥ ${spec.relativeTo.ratioMin.toFixed(2)} × ${spec.relativeTo.scenario}`,
        measured: ratio.toFixed(2),
        holds: ratio >= spec.relativeTo.ratioMin,
      });
    }
    const reference = scenario.rows.find((r) => r.kind === 'reference');
    if (spec.syncOffRatioMin !== undefined && reference !== undefined) {
      const ratio = medianRatio(service, reference);
      checks.push({
        target: `${scenario.name}: durable (synchronous=FULL) req/s ≥ ${spec.syncOffRatioMin.toFixed(2)} × synchronous=OFF`,
        measured: ratio.toFixed(2),
        holds: ratio >= spec.syncOffRatioMin,
      });
    }
  }
  const services: { scenario: string; row: Row }[] = sqlite.flatMap((s) =>
    s.rows.filter((r) => r.kind === 'service').map((row) => ({ scenario: s.name, row })),
  );
  const slowest = slowestOf(services);
  if (slowest !== undefined) {
    checks.push({
      target: `p99 latency ≤ ${LATENCY_P99_MAX_MS} ms in every scenario`,
      measured: `worst ${slowest.row.p99_ms.toFixed(2)} ms (${slowest.scenario})`,
      holds: slowest.row.p99_ms <= LATENCY_P99_MAX_MS,
    });
  }
  const peaks = services.map((x) => x.row.peakRss_bytes).filter((b): b is number => b !== undefined);
  if (peaks.length > 0) {
    const peak = Math.max(...peaks);
    checks.push({
      target: `peak RSS ≤ ${PEAK_RSS_MAX_BYTES / MiB} MB per service process`,
      measured: `worst ${(peak / MiB).toFixed(0)} MB`,
      holds: peak <= PEAK_RSS_MAX_BYTES,
    });
  }
  return [...checks, ...checkPostgresTargets(scenarios.filter((s) => s.part === 'postgres'))];
}

function checkPostgresTargets(postgres: readonly ScenarioResult[]): TargetCheck[] {
  const checks: TargetCheck[] = [];
  for (const scenario of postgres) {
    const spec = SCENARIOS.find((s) => s.name === scenario.name);
    const [one, two] = scenario.rows.filter((r) => r.kind === 'service');
    if (spec === undefined || one === undefined) continue;
    if (spec.ceilingRatioMin !== undefined) {
      checks.push({
        target: `${scenario.name} (PostgreSQL): req/s ≥ ${spec.ceilingRatioMin} × pgbench ceiling`,
        measured: one.ceilingRatio === undefined ? 'no ceiling measured' : one.ceilingRatio.toFixed(2),
        holds: one.ceilingRatio !== undefined && one.ceilingRatio >= spec.ceilingRatioMin,
      });
    }
    if (spec.postgresBaselineRatioMin !== undefined) {
      checks.push({
        target: `${scenario.name} (PostgreSQL): req/s ≥ ${spec.postgresBaselineRatioMin.toFixed(2)} × baseline`,
        measured: one.baselineRatio.toFixed(2),
        holds: one.baselineRatio >= spec.postgresBaselineRatioMin,
      });
    }
    // Only where the database does the work: elsewhere a second instance measures the loopback.
    if (spec.pgbenchScript !== undefined && two !== undefined) {
      const ratio = medianRatio(two, one);
      checks.push({
        target: `${scenario.name} (PostgreSQL): two instances at least as fast as one`,
        measured: `${ratio.toFixed(2)} × one`,
        holds: ratio >= 1,
      });
    }
  }
  const slowest = slowestOf(postgres.flatMap((s) => s.rows.filter((r) => r.kind === 'service').map((row) => ({ scenario: s.name, row }))));
  if (slowest !== undefined) {
    checks.push({
      target: `p99 latency ≤ ${POSTGRES_LATENCY_P99_MAX_MS} ms in every PostgreSQL scenario`,
      measured: `worst ${slowest.row.p99_ms.toFixed(2)} ms (${slowest.scenario}, ${slowest.row.label})`,
      holds: slowest.row.p99_ms <= POSTGRES_LATENCY_P99_MAX_MS,
    });
  }
  return checks;
}

/** The service row with the worst p99 latency. */
function slowestOf(rows: readonly { scenario: string; row: Row }[]): { scenario: string; row: Row } | undefined {
  return rows.reduce<{ scenario: string; row: Row } | undefined>((worst, x) => (worst === undefined || x.row.p99_ms > worst.row.p99_ms ? x : worst), undefined);
}

/** The baseline targets at the server-bound part's operating point (each server alone on one core, saturated). */
export function checkServerBoundTargets(scenarios: readonly ServerBoundScenario[]): TargetCheck[] {
  const checks: TargetCheck[] = [];
  for (const scenario of scenarios) {
    const spec = SCENARIOS.find((s) => s.name === scenario.name);
    const service = scenario.rows.find((r) => r.kind === 'service');
    if (spec?.baselineRatioMin === undefined || service === undefined) continue;
    checks.push({
      target: `${scenario.name}, server-bound: req/s ≥ ${spec.baselineRatioMin.toFixed(2)} × baseline`,
      measured: service.baselineRatio.toFixed(2),
      holds: service.baselineRatio >= spec.baselineRatioMin,
    });
  }
  return checks;
}
