// One scenario at one concurrency: a warm-up of each server, then rounds in which each is driven
// once, in an order that flips every round (so that none always runs on a warmer machine).
// req/s is the median over rounds; p50 and p99 are over every measured response.
import { drive, type BenchRequest, type Measurement } from './load.js';
import type { ServerProcess } from './processes.js';
import { median, percentileOfSorted, pooledSorted } from './stats.js';

export interface RoundPlan {
  readonly rounds: number;
  readonly duration_s: number;
  readonly warmup_s: number;
}

export interface Figures {
  readonly connections: number;
  readonly requestsPerSec: number;
  /** req/s of each measured round, in order: a round of one server ran next to the same round of the others. */
  readonly roundsPerSec: readonly number[];
  readonly p50_ms: number;
  readonly p99_ms: number;
  /** Every response, warm-up included, by status. */
  readonly statusCounts: Readonly<Record<string, number>>;
  readonly wrongStatus: number;
  readonly errors: number;
}

export async function measureAt(
  servers: readonly ServerProcess[],
  request: BenchRequest,
  expectedStatus: number,
  connections: number,
  plan: RoundPlan,
): Promise<Figures[]> {
  const run = (server: ServerProcess, duration_s: number): Promise<Measurement> =>
    drive(server.url, request, { connections, duration_s, expectedStatus });
  const warmups: Measurement[] = [];
  for (const server of servers) warmups.push(await run(server, plan.warmup_s));
  const measured = servers.map(() => [] as Measurement[]);
  for (let round = 0; round < plan.rounds; round++) {
    const order = servers.map((_, i) => i);
    if (round % 2 === 1) order.reverse();
    for (const i of order)
      (measured[i] as Measurement[]).push(await run(servers[i] as ServerProcess, plan.duration_s));
  }
  return servers.map((_, i) =>
    summarise(connections, [warmups[i] as Measurement], measured[i] as Measurement[]),
  );
}

export function summarise(
  connections: number,
  warmups: readonly Measurement[],
  rounds: readonly Measurement[],
): Figures {
  const every = [...warmups, ...rounds];
  const statusCounts: Record<string, number> = {};
  for (const m of every)
    for (const [status, n] of Object.entries(m.statusCounts))
      statusCounts[status] = (statusCounts[status] ?? 0) + n;
  const pooled = pooledSorted(rounds.map((m) => m.latencies_ms));
  return {
    connections,
    requestsPerSec: median(rounds.map((m) => m.requestsPerSec)),
    roundsPerSec: rounds.map((m) => m.requestsPerSec),
    p50_ms: percentileOfSorted(pooled, 0.5),
    p99_ms: percentileOfSorted(pooled, 0.99),
    statusCounts,
    wrongStatus: every.reduce((sum, m) => sum + m.wrongStatus, 0),
    errors: every.reduce((sum, m) => sum + m.errors, 0),
  };
}
