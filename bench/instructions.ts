// `npm run bench:instructions`: the judged part of the benchmark, alone (bench/instruction-count.ts
// says how it counts). Prints the table; with --breakdown, also where the instructions of each
// missed target and ruler go, function by function. Writes callgrind's files and the table to
// bench/results/instructions-<date>/ (git ignores bench/results/).
//
//   npm run bench:instructions                        every scenario: about 9–10 minutes on 2 quiet cores
//   npm run bench:instructions -- --only withdraw     the scenarios whose name holds the text
//   npm run bench:instructions -- --breakdown         and the cost of each function
//   npm run bench:instructions -- --processes 3 --rounds 2 --requests 4000 --warmup 20000 --settle 4000 --parallel 1
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  countInstructions,
  DEFAULT_PLAN,
  renderInstructionTable,
  type CountPlan,
} from './instruction-count.js';
import { describeMachine, resultsFolder, runStamp } from './results.js';

const { values: flags } = parseArgs({
  options: {
    processes: { type: 'string', default: String(DEFAULT_PLAN.processes) },
    rounds: { type: 'string', default: String(DEFAULT_PLAN.rounds) },
    requests: { type: 'string', default: String(DEFAULT_PLAN.requests) },
    warmup: { type: 'string', default: String(DEFAULT_PLAN.warmup) },
    settle: { type: 'string', default: String(DEFAULT_PLAN.settle) },
    connections: { type: 'string', default: String(DEFAULT_PLAN.connections) },
    parallel: { type: 'string', default: String(DEFAULT_PLAN.parallel) },
    only: { type: 'string' },
    breakdown: { type: 'boolean', default: false },
  },
});

function whole(name: keyof typeof flags): number {
  const n = Number(flags[name]);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`--${name} must be a whole number of 1 or more`);
  return n;
}

const started = Date.now();
const log = (line: string): void =>
  void process.stderr.write(
    `bench:instructions: ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s  ${line}\n`,
  );

async function main(): Promise<number> {
  const plan: CountPlan = {
    processes: whole('processes'),
    rounds: whole('rounds'),
    requests: whole('requests'),
    warmup: whole('warmup'),
    settle: whole('settle'),
    connections: whole('connections'),
    parallel: whole('parallel'),
    breakdown: flags.breakdown === true,
    only: flags.only,
  };
  const dir = resultsFolder(`instructions-${runStamp()}`);
  const results = await countInstructions(plan, dir, log);
  const machine = describeMachine();
  const report = [
    `Node ${machine.node} · ${machine.cores} cores, ${machine.cpuModel} · ${machine.os}`,
    '',
    renderInstructionTable(results),
    results.breakdown ?? '',
  ].join('\n');
  process.stdout.write(report);
  writeFileSync(`${dir}/table.md`, report);
  log(`callgrind's files and the table in bench/results/${dir.slice(dir.lastIndexOf('/') + 1)}/`);
  return results.rows.every((r) => r.mismatch === undefined) ? 0 : 1;
}

process.exitCode = await main().catch((error: unknown) => {
  log(`FAILED: ${error instanceof Error ? error.message : String(error)}`);
  return 1;
});
