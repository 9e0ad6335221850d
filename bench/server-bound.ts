// The server-bound part: the scenarios that have a target against the baseline, measured again at
// another operating point, with every server pinned to one core and wrk pinned to the other. In the
// autocannon part the load generator is a Node process that needs a core of its own, on the same two
// cores as the servers: it often sets the pace (both servers then wait for it, and answer few
// requests a turn) or competes with the server for a core wherever the scheduler puts them. Here
// each server has one core, as a process limited to one CPU would, and is kept saturated by a
// generator that needs less than a core: what one core of each server answers at full load. Each
// round records the server's CPU time over the round's length and how busy wrk's core was, so that a
// reader can check that the server, not wrk, set the pace.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { busyShare, coreNumbers, coresOf, pin, readCoreTimes } from './cores.js';
import { countsBetween, readRequestCounts } from './metrics-statuses.js';
import type { ServerProcess } from './processes.js';
import { alternateRounds, cpuPerResponse, type AlternatedRounds, type RoundPlan } from './rounds.js';
import type { Scenario } from './scenarios.js';
import { median } from './stats.js';
import { driveWrk, wrkScript, type WrkMeasurement } from './wrk.js';

const run = promisify(execFile);

export const SERVER_CPU = 0;
export const GENERATOR_CPU = 1;

export interface ServerBoundParticipant {
  /** A service's statuses are read exactly from its /metrics; a baseline's only by class (it has none). */
  readonly kind: 'service' | 'baseline' | 'baseline-turn-end';
  readonly label: string;
  readonly server: ServerProcess;
}

export interface ServerBoundRound {
  readonly requestsPerSec: number;
  readonly responses: number;
  /** The server process's CPU time (every thread) over the round's length: about 1 when it used all of its core. */
  readonly serverCpuShare: number | undefined;
  /** Busy share of wrk's core over the round (0–1), from /proc/stat. */
  readonly generatorCoreBusy: number | undefined;
}

export interface ServerBoundRow {
  readonly kind: ServerBoundParticipant['kind'];
  readonly label: string;
  readonly rounds: readonly ServerBoundRound[];
  /** Median over rounds. */
  readonly requestsPerSec: number;
  /** Median of per-round ratios to the baseline measured in the same rounds. */
  readonly baselineRatio: number;
  /** CPU time (every thread) per response over the measured rounds, in µs. */
  readonly cpu_us_per_response: number | undefined;
  /** Medians over rounds. */
  readonly serverCpuShare: number | undefined;
  readonly generatorCoreBusy: number | undefined;
  /** A service: every status its /metrics counted over the scenario (warm-up included), by status. */
  readonly statusCounts: Readonly<Record<string, number>> | undefined;
  readonly wrongStatus: number;
  readonly errors: number;
  readonly ok: boolean;
}

export interface ServerBoundScenario {
  readonly name: string;
  readonly expectedStatus: number;
  readonly rows: readonly ServerBoundRow[];
}

/** Why this machine cannot run the part, or undefined when it can. */
export async function serverBoundUnavailable(): Promise<string | undefined> {
  if (process.platform !== 'linux') return 'pinning to a core needs Linux (taskset, /proc/stat).';
  if (availableParallelism() < 2) return 'one core only: the server and the load generator need one each.';
  for (const [tool, args, pkg] of [['taskset', ['-V'], 'util-linux'], ['wrk', ['-v'], 'wrk']] as const) {
    try {
      await run(tool, args);
    } catch (error) {
      // wrk -v prints its version and exits 1: only a missing program counts.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return `${tool} is not installed (Debian: apt-get install -y ${pkg}).`;
    }
  }
  const cores = await coresOf(process.pid);
  const allowed = coreNumbers(cores);
  if (!allowed.has(SERVER_CPU) || !allowed.has(GENERATOR_CPU)) return `this process may not run on cores ${SERVER_CPU} and ${GENERATOR_CPU} (its cores: ${cores}).`;
  return undefined;
}

/**
 * Measures each scenario with its servers pinned to SERVER_CPU and this (the bench) process with wrk
 * on GENERATOR_CPU, in rounds that alternate the servers as the autocannon part does. Every process
 * gets back the cores it had, even when a measurement fails; if that fails, this throws, since the
 * servers measured next would run pinned.
 */
export async function runServerBoundPart(
  scenarios: readonly { readonly scenario: Scenario; readonly participants: readonly ServerBoundParticipant[] }[],
  plan: RoundPlan,
  log: (line: string) => void,
): Promise<ServerBoundScenario[]> {
  const pids = [process.pid, ...new Set(scenarios.flatMap((s) => s.participants.map((p) => p.server.pid)))];
  const before = new Map<number, string>();
  for (const pid of pids) before.set(pid, await coresOf(pid));
  const dir = mkdtempSync(join(tmpdir(), 'status-services-wrk-'));
  try {
    for (const pid of pids) await pin(pid, String(pid === process.pid ? GENERATOR_CPU : SERVER_CPU));
    const results: ServerBoundScenario[] = [];
    for (const { scenario, participants } of scenarios) {
      log(`server-bound: ${scenario.name}`);
      results.push(await measureScenario(scenario, participants, plan, wrkScript(dir, scenario.name, scenario.request)));
    }
    return results;
  } finally {
    rmSync(dir, { recursive: true, force: true });
    const refused: string[] = [];
    for (const [pid, cores] of before) {
      await pin(pid, cores).catch((error: unknown) => refused.push(`${pid} (${error instanceof Error ? error.message : String(error)})`));
    }
    if (refused.length > 0) throw new Error(`could not give these processes their cores back: ${refused.join('; ')}`);
  }
}

interface PinnedRound extends WrkMeasurement, ServerBoundRound {
  readonly cpuSeconds: number | undefined;
}

async function measureScenario(
  scenario: Scenario,
  participants: readonly ServerBoundParticipant[],
  plan: RoundPlan,
  script: string,
): Promise<ServerBoundScenario> {
  const drive = async (p: ServerBoundParticipant, duration_s: number): Promise<PinnedRound> => {
    const cpuBefore = p.server.cpuSeconds();
    const coresBefore = readCoreTimes();
    const startedMs = performance.now();
    const measured = await driveWrk(p.server.url, scenario.request.path, script, {
      connections: plan.connections,
      duration_s,
      cpu: GENERATOR_CPU,
      expectedStatus: scenario.expectedStatus,
    });
    const elapsed_s = (performance.now() - startedMs) / 1000;
    const coresAfter = readCoreTimes();
    const cpuAfter = p.server.cpuSeconds();
    const cpuSeconds = cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore;
    return {
      ...measured,
      cpuSeconds,
      serverCpuShare: cpuSeconds === undefined ? undefined : cpuSeconds / elapsed_s,
      generatorCoreBusy: busyShare(coresBefore, coresAfter, GENERATOR_CPU),
    };
  };
  const countsBefore = await Promise.all(participants.map((p) => (p.kind === 'service' ? readRequestCounts(p.server.url) : undefined)));
  const measured = await alternateRounds(participants, plan, drive);
  const countsAfter = await Promise.all(participants.map((p) => (p.kind === 'service' ? readRequestCounts(p.server.url) : undefined)));
  const baselineRounds = measured[participants.findIndex((p) => p.kind === 'baseline')]?.rounds;
  if (baselineRounds === undefined) throw new Error(`${scenario.name}: no baseline`);
  const rows = participants.map((p, i): ServerBoundRow => {
    const { warmup, rounds } = measured[i] as AlternatedRounds<PinnedRound>;
    const every = [warmup, ...rounds];
    const before = countsBefore[i];
    const after = countsAfter[i];
    const served = before === undefined || after === undefined ? undefined : countsBetween(before, after);
    // A service's own count of what it answered in between: every answer of the expected status,
    // and at least as many as wrk received (it may answer a few that wrk stopped waiting for).
    const received = every.reduce((sum, m) => sum + m.responses, 0);
    const wrongServed = served === undefined ? 0 : [...served].reduce((sum, [status, n]) => sum + (status === scenario.expectedStatus ? 0 : n), 0);
    const missing = served === undefined ? 0 : Math.max(0, received - (served.get(scenario.expectedStatus) ?? 0));
    const wrongStatus = every.reduce((sum, m) => sum + m.wrongStatus, 0) + wrongServed + missing;
    const errors = every.reduce((sum, m) => sum + m.errors, 0);
    return {
      kind: p.kind,
      label: p.label,
      rounds: rounds.map((m) => ({
        requestsPerSec: m.requestsPerSec,
        responses: m.responses,
        serverCpuShare: m.serverCpuShare,
        generatorCoreBusy: m.generatorCoreBusy,
      })),
      requestsPerSec: median(rounds.map((m) => m.requestsPerSec)),
      baselineRatio: median(rounds.map((m, r) => m.requestsPerSec / (baselineRounds[r] as PinnedRound).requestsPerSec)),
      cpu_us_per_response: cpuPerResponse(rounds),
      serverCpuShare: medianOfKnown(rounds.map((m) => m.serverCpuShare)),
      generatorCoreBusy: medianOfKnown(rounds.map((m) => m.generatorCoreBusy)),
      statusCounts: served === undefined ? undefined : Object.fromEntries([...served].map(([status, n]) => [String(status), n])),
      wrongStatus,
      errors,
      ok: wrongStatus === 0 && errors === 0,
    };
  });
  return { name: scenario.name, expectedStatus: scenario.expectedStatus, rows };
}

function medianOfKnown(values: readonly (number | undefined)[]): number | undefined {
  const known = values.filter((v): v is number => v !== undefined && Number.isFinite(v));
  return known.length === 0 ? undefined : median(known);
}
