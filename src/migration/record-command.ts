// `record`: starts the recording proxy and runs until SIGINT or SIGTERM, then lets the exchanges
// in flight end, writes the last entries and exits 0. The HAR is also written every second while
// it runs, so that it is a whole HAR on disk at any time (har-writer.ts).
import { integer, parseArgs, required, targetUrl, UsageError } from './args.js';
import type { Output } from './diff-command.js';
import { REDACTED_HEADERS } from './redact.js';
import { BODY_MAX_DEFAULT, startRecorder, type Recorder } from './recorder.js';

export const RECORD_USAGE = `Usage: node dist/cli.js record --target URL --port N --har FILE [--host H]
                              [--keep-secrets] [--body-max BYTES]

A recording reverse proxy: every request sent to http://H:N goes on to the target, its answer comes
back, and both are recorded into a HAR 1.2 file, written every second and on SIGINT or SIGTERM.
Guide: docs/migration.md.

Options:
  --target URL       the service to record (the FastAPI service as it is)
  --port N           the port to listen on (0: any free port, said on stdout)
  --har FILE         where to write the HAR (created or emptied)
  --host H           the address to listen on (default 127.0.0.1)
  --keep-secrets     record Authorization, Cookie and Set-Cookie values as they are (default: redacted)
  --body-max BYTES   the bytes of each body kept, 0 to 67108864 (default 1048576); a longer body
                     is recorded truncated and flagged, and a replay reports it cannot send it
  --help             this text
`;

const FLUSH_EVERY_MS = 1_000;

/** Resolves when the process is asked to stop. */
function stopSignal(): Promise<string> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
}

/** Runs `record` until `stopped` resolves (by default, SIGINT or SIGTERM); resolves with the exit code. */
export async function runRecord(
  argv: readonly string[],
  output: Output,
  stopped: () => Promise<string> = stopSignal,
): Promise<number> {
  let recorder: Recorder;
  let har: string;
  let keepSecrets: boolean;
  try {
    const args = parseArgs(argv, {
      values: ['target', 'port', 'har', 'host', 'body-max'],
      switches: ['keep-secrets', 'help'],
    });
    if (args.switches.has('help')) {
      output.stdout(RECORD_USAGE);
      return 0;
    }
    const target = targetUrl('target', required(args, 'target'));
    const port = integer('port', required(args, 'port'), 0, 65535);
    har = required(args, 'har');
    const bodyMax = args.values.get('body-max');
    keepSecrets = args.switches.has('keep-secrets');
    const signal = stopped();
    recorder = await startRecorder({
      target,
      host: args.values.get('host') ?? '127.0.0.1',
      port,
      har,
      keepSecrets,
      bodyMax:
        bodyMax === undefined
          ? BODY_MAX_DEFAULT
          : integer('body-max', bodyMax, 0, 64 * 1024 * 1024),
      flushEveryMs: FLUSH_EVERY_MS,
      warn: (line) => output.stderr(`warning: ${line}\n`),
    }).catch((error: unknown) => {
      throw new UsageError(
        `cannot record: ${error instanceof Error ? error.message : String(error)}`,
      );
    });
    output.stdout(
      `recording ${recorder.url} -> ${target} into ${har} (${keepSecrets ? 'secrets kept' : `${REDACTED_HEADERS} values redacted`}); Ctrl-C stops\n`,
    );
    await signal;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    output.stderr(
      `error: ${error.message}${error.message.startsWith('cannot') ? '' : ' (see record --help)'}\n`,
    );
    return 2;
  }
  const { written, lost } = await recorder.stop();
  output.stdout(`recorded ${written} exchanges into ${har}${lost > 0 ? `; ${lost} lost` : ''}\n`);
  return lost > 0 ? 1 : 0;
}
