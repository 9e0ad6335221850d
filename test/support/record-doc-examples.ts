// `npm run docs:examples [FILE…]`: runs the shell examples of the README and docs/ (or of the files
// named) as test/docs/examples.test.ts does, and writes what each printed into the ```text block
// after it (adding one where it printed something and had none). For a change to the services or
// the docs that was meant: review the diff before committing it, since what it writes is what the
// services answer now, right or wrong.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  asShown,
  documentFiles,
  DocSession,
  needsPostgres,
  postgresProblem,
  readDocument,
  REPOSITORY,
  type Example,
} from './doc-examples.js';

const files = process.argv.length > 2 ? process.argv.slice(2) : documentFiles();
const missingPostgres = await postgresProblem();

/** The lines of a document with each example's text block holding what it printed. */
function rewritten(lines: string[], printed: ReadonlyMap<Example, string>): string[] {
  const result = [...lines];
  const byLastLine = [...printed].sort(([a], [b]) => b.line - a.line);
  for (const [example, output] of byLastLine) {
    const outputLines = asShown(output).split('\n');
    if (example.expectedFences !== undefined) {
      const { open, close } = example.expectedFences;
      result.splice(open + 1, close - open - 1, ...(output.trim() === '' ? [] : outputLines));
    } else if (output.trim() !== '') {
      result.splice(example.closeLine + 1, 0, '', '```text', ...outputLines, '```');
    }
  }
  return result;
}

for (const file of files) {
  const { examples, problems } = readDocument(file);
  if (problems.length > 0) throw new Error(problems.join('\n'));
  const session = await DocSession.open();
  const printed = new Map<Example, string>();
  try {
    for (const example of examples) {
      if (missingPostgres !== undefined && needsPostgres(example.script)) {
        process.stdout.write(`${file}:${example.line}: left as it is: ${missingPostgres}\n`);
        continue;
      }
      if (example.kind === 'server') await session.start(example);
      if (example.kind !== 'run') continue;
      const result = await session.run(example);
      if (result.code !== 0)
        process.stdout.write(`${file}:${example.line}: exited with ${result.code}\n`);
      printed.set(example, result.output);
    }
  } finally {
    await session.close();
  }
  const path = join(REPOSITORY, file);
  writeFileSync(path, rewritten(readFileSync(path, 'utf8').split('\n'), printed).join('\n'));
  process.stdout.write(`recorded ${file}\n`);
}
