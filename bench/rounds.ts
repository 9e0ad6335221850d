// Measuring one scenario: a warm-up for each server, then rounds that alternate the service and its
// baseline (the order flips every round, so neither always runs on a warmer machine). A subject
// with several instances gets the connections split over them, driven at once, and summed.
import { performance } from 'node:perf_hooks';
import { drive, type BenchRequest, type Measurement } from './load.js';
import type { ServerProcess } from './processes.js';
import { median, percentileOfSorted, pooledSorted } from './stats.js';

export interface RoundPlan {
  readonly rounds: number;
  readonly duration_s: number;
  readonly warmup_s: number;
  readonly connections: number;
}

export interface Subject {
  readonly label: string;
  readonly servers: readonly ServerProcess[];
}

export interface RoundFigures {
  readonly requestsPerSec: number;
  readonly p50_ms: number;
  readonly p99_ms: number;
  readonly responses: number;
  /** The servers' CPU time over the round's length (1 = one core's worth); undefined without /proc. */
  readonly serverCpuShare?: number | undefined;
  /** The bench process's CPU time over the round's length: autocannon's, which runs in it. */
  readonly generatorCpuShare?: number;
}

export interface SubjectResult {
  readonly label: string;
  readonly instances: number;
  readonly rounds: readonly RoundFigures[];
  /** Median over rounds. */
  readonly requestsPerSec: number;
  /** Over every measured response of every round. */
  readonly p50_ms: number;
  readonly p99_ms: number;
  /** The largest VmHWM among its processes, read after the scenario. */
  readonly peakRss_bytes: number | undefined;
  /**
   * CPU time its processes used per response over the measured rounds, in µs: what a request costs
   * the server itself, whoever is the bottleneck (on two cores, it can be the load generator).
   */
  readonly cpu_us_per_response: number | undefined;
  /**
   * Medians over rounds of the servers' and the load generator's CPU time over a round's length.
   * They tell who set the pace: on two cores, a generator near a whole core (1.0) while the server
   * has time to spare means the generator did, and the two servers of a scenario are then held
   * together; a server near a core means the server did, and the ratio is what a request costs.
   */
  readonly serverCpuShare: number | undefined;
  readonly generatorCpuShare: number;
  /** Every response, warm-up included, by status. */
  readonly statusCounts: Readonly<Record<string, number>>;
  readonly wrongStatus: number;
  readonly errors: number;
}

export async function measureSubjects(
  request: BenchRequest,
  expectedStatus: number,
  subjects: readonly Subject[],
  plan: RoundPlan,
): Promise<SubjectResult[]> {
  const measured = await alternateRounds(subjects, plan, (subject, duration_s) => driveSubject(subject, request, expectedStatus, duration_s, plan.connections));
  return subjects.map((subject, i) => {
    const { warmup, rounds } = measured[i] as AlternatedRounds<Driven>;
    return summarise(subject, [warmup], rounds);
  });
}

export interface AlternatedRounds<M> {
  readonly warmup: M;
  readonly rounds: readonly M[];
}

/**
 * A warm-up of each participant, then `plan.rounds` rounds in which each is driven once, in an order
 * that flips every round (so that neither always runs on a warmer machine): each one's warm-up and
 * rounds, in the participants' order. Shared by the autocannon and the server-bound parts.
 */
export async function alternateRounds<P, M>(
  participants: readonly P[],
  plan: RoundPlan,
  drive: (participant: P, duration_s: number) => Promise<M>,
): Promise<AlternatedRounds<M>[]> {
  const warmups: M[] = [];
  for (const participant of participants) warmups.push(await drive(participant, plan.warmup_s));
  const measured = participants.map(() => [] as M[]);
  for (let round = 0; round < plan.rounds; round++) {
    const order = participants.map((_, i) => i);
    if (round % 2 === 1) order.reverse();
    for (const i of order) (measured[i] as M[]).push(await drive(participants[i] as P, plan.duration_s));
  }
  return participants.map((_, i) => ({ warmup: warmups[i] as M, rounds: measured[i] as M[] }));
}

/**
 * A round's measurement, the CPU time its servers used during it (undefined without /proc), and
 * the bench process's own CPU time (autocannon's) and the round's length.
 */
type Driven = Measurement & { readonly cpuSeconds: number | undefined; readonly generatorCpuSeconds: number; readonly wallSeconds: number };

function cpuOf(subject: Subject): number | undefined {
  let total = 0;
  for (const server of subject.servers) {
    const seconds = server.cpuSeconds();
    if (seconds === undefined) return undefined;
    total += seconds;
  }
  return total;
}

async function driveSubject(subject: Subject, request: BenchRequest, expectedStatus: number, duration_s: number, connections: number): Promise<Driven> {
  const before = cpuOf(subject);
  const generatorBefore = process.cpuUsage();
  const started = performance.now();
  const measured = await driveServers(subject, request, expectedStatus, duration_s, connections);
  const wallSeconds = (performance.now() - started) / 1000;
  const generator = process.cpuUsage(generatorBefore);
  const after = cpuOf(subject);
  return {
    ...measured,
    cpuSeconds: before === undefined || after === undefined ? undefined : after - before,
    generatorCpuSeconds: (generator.user + generator.system) / 1e6,
    wallSeconds,
  };
}

async function driveServers(subject: Subject, request: BenchRequest, expectedStatus: number, duration_s: number, connections: number): Promise<Measurement> {
  const count = subject.servers.length;
  const parts = await Promise.all(
    subject.servers.map((server, i) =>
      drive(server.url, request, {
        connections: Math.floor(connections / count) + (i < connections % count ? 1 : 0),
        duration_s,
        expectedStatus,
      }),
    ),
  );
  return parts.length === 1 ? (parts[0] as Measurement) : combine(parts);
}

function combine(parts: readonly Measurement[]): Measurement {
  const statusCounts: Record<string, number> = {};
  for (const part of parts) for (const [status, n] of Object.entries(part.statusCounts)) statusCounts[status] = (statusCounts[status] ?? 0) + n;
  return {
    responses: parts.reduce((sum, p) => sum + p.responses, 0),
    requestsPerSec: parts.reduce((sum, p) => sum + p.requestsPerSec, 0),
    latencies_ms: pooledSorted(parts.map((p) => p.latencies_ms)),
    statusCounts,
    wrongStatus: parts.reduce((sum, p) => sum + p.wrongStatus, 0),
    errors: parts.reduce((sum, p) => sum + p.errors, 0),
  };
}

function summarise(subject: Subject, warmups: readonly Driven[], rounds: readonly Driven[]): SubjectResult {
  const every = [...warmups, ...rounds];
  const statusCounts: Record<string, number> = {};
  for (const m of every) for (const [status, n] of Object.entries(m.statusCounts)) statusCounts[status] = (statusCounts[status] ?? 0) + n;
  const pooled = pooledSorted(rounds.map((m) => m.latencies_ms));
  const peaks = subject.servers.map((s) => s.peakRssBytes()).filter((b): b is number => b !== undefined);
  const figures = rounds.map((m) => ({
    requestsPerSec: m.requestsPerSec,
    p50_ms: percentileOfSorted(m.latencies_ms, 0.5),
    p99_ms: percentileOfSorted(m.latencies_ms, 0.99),
    responses: m.responses,
    serverCpuShare: m.cpuSeconds === undefined ? undefined : m.cpuSeconds / m.wallSeconds,
    generatorCpuShare: m.generatorCpuSeconds / m.wallSeconds,
  }));
  return {
    label: subject.label,
    instances: subject.servers.length,
    rounds: figures,
    requestsPerSec: median(rounds.map((m) => m.requestsPerSec)),
    p50_ms: percentileOfSorted(pooled, 0.5),
    p99_ms: percentileOfSorted(pooled, 0.99),
    peakRss_bytes: peaks.length === 0 ? undefined : Math.max(...peaks),
    cpu_us_per_response: cpuPerResponse(rounds),
    serverCpuShare: figures.some((f) => f.serverCpuShare === undefined) ? undefined : median(figures.map((f) => f.serverCpuShare as number)),
    generatorCpuShare: median(figures.map((f) => f.generatorCpuShare)),
    statusCounts,
    wrongStatus: every.reduce((sum, m) => sum + m.wrongStatus, 0),
    errors: every.reduce((sum, m) => sum + m.errors, 0),
  };
}

/** Median of the per-round ratios of two subjects measured in the same rounds. */
export function medianRatio(subject: SubjectResult, reference: SubjectResult): number {
  return median(subject.rounds.map((r, i) => r.requestsPerSec / (reference.rounds[i]?.requestsPerSec ?? NaN)));
}

/** CPU seconds over the rounds ÷ their responses, in µs; undefined where a round's CPU time is unknown. */
export function cpuPerResponse(rounds: readonly { readonly cpuSeconds: number | undefined; readonly responses: number }[]): number | undefined {
  let seconds = 0;
  let responses = 0;
  for (const round of rounds) {
    if (round.cpuSeconds === undefined) return undefined;
    seconds += round.cpuSeconds;
    responses += round.responses;
  }
  return responses === 0 ? undefined : (seconds * 1e6) / responses;
}
