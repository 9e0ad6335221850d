// The mutation score over every area measured so far (reports/mutation/<area>.json, written by
// StrykerJS), per area and in total, and each surviving mutant with its place and replacement.
// Score = detected / (detected + survived + no coverage), detected = killed + timed out, as Stryker counts.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const folder = 'reports/mutation';
const reports = readdirSync(folder).filter(
  (name) => name.endsWith('.json') && !name.endsWith('.incremental.json'),
);
const total = { killed: 0, timeout: 0, survived: 0, noCoverage: 0 };
const survivors = [];
const percent = (c) =>
  ((100 * (c.killed + c.timeout)) / (c.killed + c.timeout + c.survived + c.noCoverage)).toFixed(2);

for (const name of reports.sort()) {
  const report = JSON.parse(readFileSync(join(folder, name), 'utf8'));
  const counts = { killed: 0, timeout: 0, survived: 0, noCoverage: 0 };
  for (const [file, { mutants, source }] of Object.entries(report.files)) {
    const lines = source.split('\n');
    for (const mutant of mutants) {
      const key = {
        Killed: 'killed',
        Timeout: 'timeout',
        Survived: 'survived',
        NoCoverage: 'noCoverage',
      }[mutant.status];
      if (key === undefined) continue; // compile and runtime errors, ignored mutants: not counted, as in Stryker
      counts[key] += 1;
      if (key === 'survived' || key === 'noCoverage') {
        const { line, column } = mutant.location.start;
        const code = (lines[line - 1] ?? '').trim().slice(0, 100);
        survivors.push(
          `${file}:${line}:${column} ${mutant.status} ${mutant.mutatorName} → ${JSON.stringify(mutant.replacement ?? '')}   | ${code}`,
        );
      }
    }
  }
  for (const key of Object.keys(total)) total[key] += counts[key];
  console.log(
    `${name.replace('.json', '').padEnd(14)} score ${percent(counts)} %  (killed ${counts.killed}, timed out ${counts.timeout}, survived ${counts.survived}, no coverage ${counts.noCoverage})`,
  );
}
console.log(
  `${'total'.padEnd(14)} score ${percent(total)} %  (killed ${total.killed}, timed out ${total.timeout}, survived ${total.survived}, no coverage ${total.noCoverage})`,
);
if (survivors.length > 0) console.log(`\nsurvivors:\n${survivors.join('\n')}`);
