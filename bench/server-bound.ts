// The server-bound part: the scenarios that have a target against the baseline, measured again with
// every server pinned to one core and wrk pinned to the other. In the autocannon part the load
// generator is a Node process as hungry as the servers, on the same two cores, and it often sets
// the pace: both servers then wait for it, or compete with it for a core wherever the scheduler
// puts them, and the ratio moves with that from run to run. Here each server has one core to
// itself, as a process limited to one CPU would, and the generator needs a fraction of the other:
// the ratio is the servers' own. Each round records how busy both cores were, so a reader can see
// that the server's core was the full one.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ServerProcess } from './processes.js';
import { cpuPerResponse } from './rounds.js';
import type { TargetCheck } from './results.js';
import type { Scenario } from './scenarios.js';
import { median } from './stats.js';
import { driveWrk, wrkScript, type WrkMeasurement } from './wrk.js';

const run = promisify(execFile);

export const SERVER_CPU = 0;
export const GENERATOR_CPU = 1;

export interface ServerBoundPlan {
  readonly rounds: number;
  readonly duration_s: number;
  readonly warmup_s: number;
  readonly connections: number;
}

export interface ServerBoundParticipant {
  readonly kind: 'service' | 'baseline' | 'baseline-turn-end';
  readonly label: string;
  readonly server: ServerProcess;
}

export interface ServerBoundRound {
  readonly requestsPerSec: number;
  readonly responses: number;
  /** Busy share of the server's core and of wrk's over the round (0–1), from /proc/stat. */
  readonly serverCoreBusy: number;
  readonly generatorCoreBusy: number;
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
  readonly serverCoreBusy: number;
  readonly generatorCoreBusy: number;
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
  const cores = await ownCores();
  const allowed = coreNumbers(cores);
  if (!allowed.has(SERVER_CPU) || !allowed.has(GENERATOR_CPU)) return `this process may not run on cores ${SERVER_CPU} and ${GENERATOR_CPU} (its cores: ${cores}).`;
  return undefined;
}

/** The cores of a taskset list such as "0,1", "0-3" or "0-1,4". */
export function coreNumbers(list: string): Set<number> {
  const cores = new Set<number>();
  for (const part of list.split(',')) {
    const [from, to = from] = part.split('-').map(Number);
    if (from === undefined || to === undefined || !Number.isInteger(from) || !Number.isInteger(to)) throw new Error(`not a list of cores: ${list}`);
    for (let core = from; core <= to; core++) cores.add(core);
  }
  return cores;
}

/** Pins every thread of a process (and the threads it starts later) to these cores. */
async function pin(pid: number, cpus: string): Promise<void> {
  await run('taskset', ['-a', '-p', '-c', cpus, String(pid)]);
}

/** The cores this (the bench) process may run on, as taskset writes them: "0,1" or "0-3". */
async function ownCores(): Promise<string> {
  const { stdout } = await run('taskset', ['-c', '-p', String(process.pid)]);
  const list = /affinity list:\s*(\S+)/.exec(stdout)?.[1];
  if (list === undefined) throw new Error(`taskset printed no affinity list: ${stdout}`);
  return list;
}

/**
 * Measures each scenario with its participants pinned to SERVER_CPU, in rounds that alternate them
 * as the autocannon part does, then gives every server back the cores it had.
 */
export async function runServerBoundPart(
  scenarios: readonly { readonly scenario: Scenario; readonly participants: readonly ServerBoundParticipant[] }[],
  plan: ServerBoundPlan,
  log: (line: string) => void,
): Promise<ServerBoundScenario[]> {
  const servers = [...new Set(scenarios.flatMap((s) => s.participants.map((p) => p.server)))];
  const restore = await ownCores();
  const dir = mkdtempSync(join(tmpdir(), 'status-services-wrk-'));
  try {
    for (const server of servers) await pin(server.pid, String(SERVER_CPU));
    const results: ServerBoundScenario[] = [];
    for (const { scenario, participants } of scenarios) {
      log(`server-bound: ${scenario.name}`);
      results.push(await measureScenario(scenario, participants, plan, wrkScript(dir, scenario.name, scenario.request)));
    }
    return results;
  } finally {
    for (const server of servers) await pin(server.pid, restore).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Driven extends WrkMeasurement, Omit<ServerBoundRound, 'requestsPerSec' | 'responses'> {
  readonly cpuSeconds: number | undefined;
}

async function measureScenario(
  scenario: Scenario,
  participants: readonly ServerBoundParticipant[],
  plan: ServerBoundPlan,
  script: string,
): Promise<ServerBoundScenario> {
  const drive = async (p: ServerBoundParticipant, duration_s: number): Promise<Driven> => {
    const cpuBefore = p.server.cpuSeconds();
    const coresBefore = coreTimes();
    const measured = await driveWrk(p.server.url, scenario.request.path, script, {
      connections: plan.connections,
      duration_s,
      cpu: GENERATOR_CPU,
      expectedStatus: scenario.expectedStatus,
    });
    const coresAfter = coreTimes();
    const cpuAfter = p.server.cpuSeconds();
    return {
      ...measured,
      cpuSeconds: cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore,
      serverCoreBusy: busyShare(coresBefore, coresAfter, SERVER_CPU),
      generatorCoreBusy: busyShare(coresBefore, coresAfter, GENERATOR_CPU),
    };
  };
  const warmups: Driven[] = [];
  for (const p of participants) warmups.push(await drive(p, plan.warmup_s));
  const measured = participants.map(() => [] as Driven[]);
  for (let round = 0; round < plan.rounds; round++) {
    const order = participants.map((_, i) => i);
    if (round % 2 === 1) order.reverse();
    for (const i of order) (measured[i] as Driven[]).push(await drive(participants[i] as ServerBoundParticipant, plan.duration_s));
  }
  const baselineAt = participants.findIndex((p) => p.kind === 'baseline');
  const baselineRounds = measured[baselineAt];
  if (baselineRounds === undefined) throw new Error(`${scenario.name}: no baseline`);
  const rows = participants.map((p, i): ServerBoundRow => {
    const rounds = measured[i] as Driven[];
    const every = [warmups[i] as Driven, ...rounds];
    const wrongStatus = every.reduce((sum, m) => sum + m.wrongStatus, 0);
    const errors = every.reduce((sum, m) => sum + m.errors, 0);
    return {
      kind: p.kind,
      label: p.label,
      rounds: rounds.map((m) => ({
        requestsPerSec: m.requestsPerSec,
        responses: m.responses,
        serverCoreBusy: m.serverCoreBusy,
        generatorCoreBusy: m.generatorCoreBusy,
      })),
      requestsPerSec: median(rounds.map((m) => m.requestsPerSec)),
      baselineRatio: median(rounds.map((m, r) => m.requestsPerSec / ((baselineRounds[r] as Driven).requestsPerSec))),
      cpu_us_per_response: cpuPerResponse(rounds),
      serverCoreBusy: median(rounds.map((m) => m.serverCoreBusy)),
      generatorCoreBusy: median(rounds.map((m) => m.generatorCoreBusy)),
      wrongStatus,
      errors,
      ok: wrongStatus === 0 && errors === 0,
    };
  });
  return { name: scenario.name, expectedStatus: scenario.expectedStatus, rows };
}

/** Per core: [busy, all] clock ticks so far, from /proc/stat (idle and iowait are not busy). */
function coreTimes(): Map<number, readonly [number, number]> {
  const times = new Map<number, readonly [number, number]>();
  for (const line of readFileSync('/proc/stat', 'utf8').split('\n')) {
    const match = /^cpu(\d+) (.*)$/.exec(line);
    if (match === null) continue;
    const ticks = (match[2] as string).trim().split(/\s+/).map(Number);
    const all = ticks.reduce((sum, t) => sum + t, 0);
    const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
    times.set(Number(match[1]), [all - idle, all]);
  }
  return times;
}

function busyShare(before: Map<number, readonly [number, number]>, after: Map<number, readonly [number, number]>, cpu: number): number {
  const [busy0, all0] = before.get(cpu) ?? [0, 0];
  const [busy1, all1] = after.get(cpu) ?? [0, 0];
  return all1 === all0 ? NaN : (busy1 - busy0) / (all1 - all0);
}

export function checkServerBoundTargets(scenarios: readonly ServerBoundScenario[], specs: readonly Scenario[]): TargetCheck[] {
  const checks: TargetCheck[] = [];
  for (const scenario of scenarios) {
    const spec = specs.find((s) => s.name === scenario.name);
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
