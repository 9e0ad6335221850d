// How often each target held over the recorded runs (bench/results/*.json). On this project's
// machines one run says little: the same build's ratio to the baseline moves by a fifth or more
// between runs minutes apart (README, "Reading these figures"), so a target that holds in one run
// and misses in the next is better described by how often it held, and by how far its figures
// spread, than by either run. Quick runs are left out unless asked for: their rounds are too short
// to count as a measure.
//
//   npm run bench:history                                 every full run recorded
//   npm run bench:history -- --since 2026-11-24T13:00Z    the runs from then on
//   npm run bench:history -- --quick-too                  quick runs too
import { readdirSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { renderHistory, selectRuns, type RecordedRun } from './target-tally.js';

function readRecordedRuns(): RecordedRun[] {
  const dir = new URL('../../bench/results/', import.meta.url);
  return readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .map((name) => JSON.parse(readFileSync(new URL(name, dir), 'utf8')) as RecordedRun);
}

function main(): number {
  try {
    const { values: flags } = parseArgs({ options: { since: { type: 'string' }, 'quick-too': { type: 'boolean', default: false } } });
    process.stdout.write(renderHistory(selectRuns(readRecordedRuns(), flags.since, flags['quick-too'] === true)));
    return 0;
  } catch (error) {
    process.stderr.write(`bench:history: ${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
}

process.exitCode = main();
