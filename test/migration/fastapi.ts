// A real FastAPI for the migration kit's tests: Debian's python3-fastapi (0.92, pydantic 1.10)
// under Debian's uvicorn, serving the spec's to-do service as the seed wrote it
// (test/fixtures/fastapi/todo_app.py), fresh at every start. Without them the suites that need
// them skip with the reason, unless REQUIRE_FASTAPI=1 (as in CI), which makes that a failure.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { connect, createServer, type AddressInfo } from 'node:net';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const PYTHON = '/usr/bin/python3';
const APP_DIR = fileURLToPath(new URL('../../../test/fixtures/fastapi', import.meta.url));
const START_TIMEOUT_MS = 20_000;

/** False when FastAPI and uvicorn are there; else why the suite is skipped. */
export function fastapiSkip(): string | false {
  const probe = spawnSync(PYTHON, ['-c', 'import fastapi, uvicorn'], { encoding: 'utf8' });
  if (probe.status === 0) return false;
  const problem = `${PYTHON} cannot import fastapi and uvicorn (apt-get install python3-fastapi python3-uvicorn): ${(probe.stderr || String(probe.error ?? '')).trim().split('\n').at(-1) ?? ''}`;
  if (process.env.REQUIRE_FASTAPI === '1') {
    test('FastAPI and uvicorn are installed (REQUIRE_FASTAPI=1)', () => assert.fail(problem));
  }
  return `${problem} (set REQUIRE_FASTAPI=1 to fail instead of skipping)`;
}

export interface FastApi {
  readonly url: string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

const accepts = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

async function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exit = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exit;
  clearTimeout(timer);
}

/** Starts the app on a free port and resolves once it accepts connections. */
export async function startFastApi(): Promise<FastApi> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const child = spawn(
      PYTHON,
      [
        '-m',
        'uvicorn',
        'todo_app:app',
        '--app-dir',
        APP_DIR,
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let output = '';
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (child.exitCode === null && Date.now() < deadline && !(await accepts(port)))
      await new Promise((resolve) => setTimeout(resolve, 50));
    if (child.exitCode === null && (await accepts(port)))
      return { url: `http://127.0.0.1:${port}`, stop: () => stopped(child) };
    await stopped(child);
    // Another process may have taken the port since it was free: another try.
    if (!/address already in use/i.test(output))
      throw new Error(`uvicorn did not start within ${START_TIMEOUT_MS} ms:\n${output}`);
  }
  throw new Error('uvicorn found no free port in three tries');
}
