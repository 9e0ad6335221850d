// What limits held in PostgreSQL cost a service's throughput when no client is over its limit: the
// same service twice on one database, limits off and limits on (so high that every request is
// admitted: each pays for its decision and its RateLimit fields), at POSTGRES_CONNECTIONS
// connections, in alternating rounds (rounds.ts). Each round's on ÷ off compares two servers
// measured one right after the other, so a machine whose load moves affects both alike; the
// target is judged on the median of those ratios. `npm run bench` and `npm run bench:rate-limits`
// both measure it.
import type { ServerProcess } from './processes.js';
import { measureAt, type Figures, type RoundPlan } from './rounds.js';
import { POSTGRES_CONNECTIONS, type Scenario } from './scenarios.js';
import { median } from './stats.js';
import { startService } from './servers.js';

/** No request of the run reaches these limits. */
const UNREACHED_LIMITS = 'writes=1000000/s:1000000,reads=1000000/s:1000000';
/** The scenarios measured, where they are among those chosen. */
export const LIMITED_SCENARIOS = ['GET /todos/1', 'POST /withdraw/alice/1'];
/** Issues #33 and #44: limits on keep at least this share of the throughput with limits off (median of the rounds' ratios). */
export const LIMITS_RATIO_MIN = 0.8;

export interface LimitsRow {
  readonly scenario: Scenario;
  readonly off: Figures;
  readonly on: Figures;
  /** on ÷ off of each round. */
  readonly ratios: readonly number[];
  readonly median: number;
}

export async function measureLimitsRatio(
  databaseUrl: string,
  scenarios: readonly Scenario[],
  plan: RoundPlan,
  log: (line: string) => void,
): Promise<LimitsRow[]> {
  const rows: LimitsRow[] = [];
  for (const scenario of scenarios.filter((s) => LIMITED_SCENARIOS.includes(s.name))) {
    const started: ServerProcess[] = [];
    try {
      started.push(
        await startService(`${scenario.service} limits off`, scenario.service, databaseUrl),
      );
      started.push(
        await startService(`${scenario.service} limits on`, scenario.service, databaseUrl, [
          '--rate-limit',
          UNREACHED_LIMITS,
        ]),
      );
      log(`limits in PostgreSQL: ${scenario.name}, off and on`);
      const [off, on] = await measureAt(
        started,
        scenario.request,
        scenario.expectedStatus,
        POSTGRES_CONNECTIONS,
        plan,
      );
      if (off === undefined || on === undefined) throw new Error('no figures');
      const ratios = on.roundsPerSec.map((r, round) => r / (off.roundsPerSec[round] as number));
      rows.push({ scenario, off, on, ratios, median: median(ratios) });
    } finally {
      await Promise.all(started.map((server) => server.stop()));
    }
  }
  return rows;
}
