// The migration kit's commands, `diff` and `record` (docs/migration.md), as the command line hands
// them over: the word after `node dist/cli.js`, then that command's own options. The services'
// options (src/config.ts) play no part here.
import { runDiff, type Output } from './diff-command.js';
import { runRecord } from './record-command.js';

export type MigrationCommand = 'diff' | 'record';

const processOutput: Output = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  stderrIsTerminal: process.stderr.isTTY === true,
};

/** Runs one of the kit's commands; resolves with the process's exit code. */
export function runMigrationCommand(
  command: MigrationCommand,
  argv: readonly string[],
  output: Output = processOutput,
): Promise<number> {
  return command === 'diff' ? runDiff(argv, output) : runRecord(argv, output);
}
