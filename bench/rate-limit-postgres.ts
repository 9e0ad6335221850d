// `npm run bench:rate-limits`: what limits held in PostgreSQL cost a service's throughput when no
// client is over its limit (limits-ratio.ts says how it is measured), on a fresh database, with more
// rounds than `npm run bench` gives it. Prints req/s of each (the median over rounds) and the ratio
// on ÷ off of each round: their median and the least.
//
//   npm run bench:rate-limits                          5 rounds of 3 s per server and request
//   npm run bench:rate-limits -- --rounds 9 --duration 5
import { parseArgs } from 'node:util';
import { LIMITS_RATIO_MIN, measureLimitsRatio } from './limits-ratio.js';
import { POSTGRES_CONNECTIONS, SCENARIOS } from './scenarios.js';

const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    duration: { type: 'string', default: '3' },
  },
});

const SERVER_URL = (process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(
  /\/+$/,
  '',
);

async function main(): Promise<void> {
  const plan = { rounds: Number(flags.rounds), duration_s: Number(flags.duration), warmup_s: 1 };
  const database = `bench_rate_limits_${process.pid}_${Date.now()}`;
  const { default: pg } = await import('pg');
  const admin = new pg.Client({ connectionString: `${SERVER_URL}/postgres` });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  try {
    const rows = await measureLimitsRatio(
      `${SERVER_URL}/${database}`,
      SCENARIOS,
      plan,
      (line) => void process.stderr.write(`bench:rate-limits: ${line}\n`),
    );
    const lines = [
      `Limits held in PostgreSQL, no client over its limit: req/s at ${POSTGRES_CONNECTIONS} connections, median of ${plan.rounds} rounds of ${plan.duration_s} s per server (servers alternating); on ÷ off of each round, their median and the least.`,
      '',
      `| Scenario | Limits off req/s | Limits on req/s | On ÷ off, each round | Median | Least | Median ≥ ${LIMITS_RATIO_MIN} |`,
      '|---|---:|---:|---|---:|---:|---|',
    ];
    for (const row of rows) {
      for (const figures of [row.off, row.on]) {
        if (figures.wrongStatus > 0 || figures.errors > 0)
          throw new Error(
            `${row.scenario.name}: ${figures.wrongStatus} answers with another status, ${figures.errors} errors (${JSON.stringify(figures.statusCounts)})`,
          );
      }
      lines.push(
        `| ${row.scenario.name} | ${row.off.requestsPerSec.toFixed(0)} | ${row.on.requestsPerSec.toFixed(0)} | ${row.ratios.map((r) => r.toFixed(2)).join(', ')} | ${row.median.toFixed(2)} | ${Math.min(...row.ratios).toFixed(2)} | ${row.median >= LIMITS_RATIO_MIN ? 'met' : '**missed**'} |`,
      );
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  }
}

await main();
