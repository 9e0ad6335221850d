// The shape of one benchmark run's results, the machine it ran on, and where they are written:
// bench/results/<date>.json for every run, and bench/results/latest.md for the newest table.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Build } from './build.js';
import type { Ceiling } from './pgbench.js';
import type { RoundPlan, SubjectResult } from './rounds.js';
import type { ServerBoundScenario } from './server-bound.js';

export interface Row extends SubjectResult {
  /** `baseline-turn-end`: the baseline writing its answers at the end of the turn, as ours do (no target). */
  readonly kind: 'service' | 'reference' | 'baseline' | 'baseline-turn-end';
  /** Median of per-round ratios to the baseline measured in the same rounds. */
  readonly baselineRatio: number;
  /**
   * The baseline's CPU per response ÷ this server's: the throughput ratio the two would show if the
   * server, not the load generator, were the bottleneck. 1 = as cheap as the baseline.
   */
  readonly cpuRatio: number | undefined;
  /** PostgreSQL part: req/s ÷ the pgbench ceiling of the same statements, where the scenario has one. */
  readonly ceilingRatio?: number;
  readonly ok: boolean;
}

export interface ScenarioResult {
  readonly part: 'sqlite' | 'postgres';
  readonly name: string;
  readonly expectedStatus: number;
  /** Why the service's and the baseline's single answers differ, if they do (the scenario then fails). */
  readonly answerMismatch: string | undefined;
  readonly rows: readonly Row[];
  /** PostgreSQL part: pgbench's figure for the same statements, one transaction each, or why there is none. */
  readonly ceiling?: Ceiling | { readonly unavailable: string };
}

export interface TargetCheck {
  readonly target: string;
  readonly measured: string;
  readonly holds: boolean;
}

export interface Machine {
  readonly cores: number;
  readonly cpuModel: string;
  readonly memory_GiB: number;
  readonly node: string;
  readonly os: string;
}

export interface BenchResults {
  readonly date: string;
  readonly quick: boolean;
  readonly machine: Machine;
  /** The commit measured; absent in the results of runs made before it was recorded. */
  readonly build?: Build | undefined;
  readonly plan: { readonly sqlite: RoundPlan; readonly postgres: RoundPlan; readonly serverBound: RoundPlan };
  readonly scenarios: readonly ScenarioResult[];
  /** The scenarios with a baseline target with each server pinned to one core and wrk to another (empty when skipped). */
  readonly serverBound: readonly ServerBoundScenario[];
  readonly targets: readonly TargetCheck[];
  /** Why the PostgreSQL part was skipped, or undefined when it ran. */
  readonly postgresSkipped: string | undefined;
  /** Why the server-bound part was skipped, or undefined when it ran. */
  readonly serverBoundSkipped: string | undefined;
  /** Why the server-bound part stopped before its end (the run then fails), or undefined. */
  readonly serverBoundFailed?: string | undefined;
}

export function describeMachine(): Machine {
  const all = cpus();
  return {
    cores: all.length,
    cpuModel: all[0]?.model.trim() ?? 'unknown',
    memory_GiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    os: `${process.platform} ${release()}`,
  };
}

/** Writes the JSON of this run and the latest table; returns the JSON's name. */
export function writeResults(results: BenchResults, markdown: string): string {
  const dir = new URL('../../bench/results/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  const name = `${results.date.replace(/[:.]/g, '-')}${results.quick ? '-quick' : ''}.json`;
  writeFileSync(new URL(name, dir), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(new URL('latest.md', dir), markdown);
  return name;
}

/** bench/results/NAME/, made if missing: raw run files go there (git ignores bench/results/). */
export function resultsFolder(name: string): string {
  const dir = fileURLToPath(new URL(`../../bench/results/${name}/`, import.meta.url));
  mkdirSync(dir, { recursive: true });
  return dir.replace(/\/$/, '');
}

/** A run's date and time, for file names: 2026-11-25T15-04-05Z. */
export const runStamp = (): string => new Date().toISOString().replace(/\.\d+Z$/, 'Z').replace(/:/g, '-');
