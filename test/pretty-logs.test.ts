// `npm run start:pretty` (docs/operating.md, "Reading the logs") starts the services as `npm start`
// does, with the command line's arguments, and prints their log lines through pino-pretty for a
// person to read: one line per request with the time, level, service, method, path and status.
// Ctrl-C (SIGINT to the whole process group, as a terminal sends it) still stops the server
// gracefully, and its last lines are printed too.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { send } from './support/http.js';
import { PROCESS_SUITE_TIMEOUT_MS } from './support/time-limits.js';

const REPOSITORY = fileURLToPath(new URL('../..', import.meta.url));
/** It may compile first, as `npm start` does when dist/ is not up to date. */
const START_TIMEOUT_MS = 120_000;
/** `[15:22:08.692] INFO: ` — the local time of the line and its level's name. */
const PRETTY_START = /^\[\d\d:\d\d:\d\d\.\d{3}\] (INFO|WARN|ERROR): /;

describe('npm run start:pretty', { timeout: PROCESS_SUITE_TIMEOUT_MS }, () => {
  test('prints a readable line per request, not JSON, and Ctrl-C still stops the server gracefully', async () => {
    // Its own process group, so that a SIGINT reaches npm, the server and pino-pretty together.
    const child = spawn(
      'npm',
      ['run', 'start:pretty', '--silent', '--', 'todo', '--db', 'memory', '--port', '0'],
      {
        cwd: REPOSITORY,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      },
    );
    const pid = child.pid ?? assert.fail('npm did not start');
    const exited = new Promise<number | null>((resolve) =>
      child.once('exit', (code) => resolve(code)),
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const printed = async (pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> => {
      const started = performance.now();
      for (;;) {
        const found = pattern.exec(output);
        if (found !== null) return found;
        if (performance.now() - started > timeoutMs)
          assert.fail(`no line matching ${pattern} within ${timeoutMs} ms:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    try {
      const [, url] = await printed(
        /^\[[^\]]+\] INFO: todo listening \{.*"url":"(http:\/\/[^"]+)"/m,
        START_TIMEOUT_MS,
      );
      const answer = await send(url as string, {
        method: 'GET',
        path: '/todos/1',
        headers: [['X-Request-Id', 'pretty-1']],
      });
      assert.equal(answer.status, 200);

      const [line] = await printed(/^.*"requestId":"pretty-1".*$/m, 5_000);
      assert.match(line, PRETTY_START);
      assert.match(
        line,
        /INFO: todo request GET \/todos\/1 200 [\d.]+ ms \{"requestId":"pretty-1","route":"\/todos\/\{todo_id\}","bytes":40\}$/,
      );

      process.kill(-pid, 'SIGINT');
      assert.equal(await exited, 0, output);
      assert.match(
        output,
        /INFO: shutting down \{"signal":"SIGINT"\}\n.*INFO: shut down \{"connectionsCut":false\}\n$/,
      );
      for (const printedLine of output.trimEnd().split('\n'))
        assert.match(printedLine, PRETTY_START, 'every line is for a person, none is JSON');
    } finally {
      if (child.exitCode === null && child.signalCode === null) process.kill(-pid, 'SIGKILL');
    }
  });
});
