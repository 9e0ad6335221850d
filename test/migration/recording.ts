// `record` as a process, the way a team runs it in front of its service: on a port of its own
// (--port 0 here, and the port it took read from its first line), stopped with a signal.
import { once } from 'node:events';
import { runCli } from '../support/service-process.js';

const START_TIMEOUT_MS = 15_000;

export interface Recording {
  readonly url: string;
  /** Everything the process wrote so far, stdout and stderr. */
  output(): string;
  /** Sends the signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export async function startRecording(
  target: string,
  har: string,
  extra: readonly string[] = [],
): Promise<Recording> {
  const child = runCli(['record', '--target', target, '--port', '0', '--har', har, ...extra]);
  let output = '';
  const exited = once(child, 'exit') as Promise<[number | null]>;
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`record did not start within ${START_TIMEOUT_MS} ms:\n${output}`)),
      START_TIMEOUT_MS,
    );
    const seen = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      const match = /^recording (http:\/\/\S+) -> /m.exec(output);
      if (match !== null) {
        clearTimeout(timer);
        resolve(match[1] as string);
      }
    };
    child.stdout?.on('data', seen);
    child.stderr?.on('data', seen);
    void exited.then(([code]) => {
      clearTimeout(timer);
      reject(new Error(`record exited with ${code} before it listened:\n${output}`));
    });
  });
  return {
    url,
    output: () => output,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const [code] = await exited;
      return code;
    },
  };
}
