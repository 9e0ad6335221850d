// PgBouncer for tests: Debian's pgbouncer on a free port, in pool_mode = transaction and otherwise
// its default settings, in front of the test PostgreSQL server, from a config file of its own in a
// temporary folder. Suites skip with the reason when pgbouncer is not installed; with
// REQUIRE_PGBOUNCER=1 (as in CI) a failing test says so instead.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { TEST_DATABASE_URL } from './postgres.js';

const CANDIDATES = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer', '/usr/local/bin/pgbouncer'];
const STARTUP_MS_MAX = 10_000;

const binary = (): string | undefined => CANDIDATES.find((path) => existsSync(path));

/** The `skip` of a suite that needs pgbouncer: false when installed, else the reason (a failing test under REQUIRE_PGBOUNCER=1). */
export function pgbouncerSkip(): string | false {
  if (binary() !== undefined) return false;
  const problem = `pgbouncer is not installed (looked for ${CANDIDATES.join(', ')}; apt-get install pgbouncer)`;
  if (process.env.REQUIRE_PGBOUNCER === '1') {
    test('pgbouncer is installed (REQUIRE_PGBOUNCER=1)', () => {
      throw new Error(problem);
    });
  }
  return `${problem} (set REQUIRE_PGBOUNCER=1 to fail instead of skipping)`;
}

export interface PgBouncer {
  /** The URL of `databaseUrl`'s database through the pooler. */
  urlOf(databaseUrl: string): string;
  /** Stops it at once (SIGTERM: PgBouncer's immediate shutdown, every connection cut), then starts it again on the same port. */
  restart(): Promise<void>;
  /** Stops it at once, until `start`. */
  halt(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Starts pgbouncer in front of the test server; every database of that server is reachable through it. */
export async function startPgBouncer(): Promise<PgBouncer> {
  const path = binary();
  if (path === undefined) throw new Error('pgbouncer is not installed');
  const server = new URL(TEST_DATABASE_URL);
  const user = decodeURIComponent(server.username) || 'postgres';
  const folder = await mkdtemp(join(tmpdir(), 'pgbouncer-'));
  // pgbouncer refuses to run as root: it runs as postgres then, and must read its folder.
  await chmod(folder, 0o755);
  const port = await freePort();
  const config = join(folder, 'pgbouncer.ini');
  await writeFile(join(folder, 'users.txt'), `"${user}" ""\n`, { mode: 0o644 });
  await writeFile(
    config,
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || '5432'}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(folder, 'users.txt')}`,
      'pool_mode = transaction',
      '',
    ].join('\n'),
    { mode: 0o644 },
  );

  let child: ChildProcess | undefined;
  let output = '';
  const start = async (): Promise<void> => {
    const args = process.getuid?.() === 0 ? ['-u', 'postgres', config] : [config];
    const started = spawn(path, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    started.stdout?.on(
      'data',
      (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)),
    );
    started.stderr?.on(
      'data',
      (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)),
    );
    child = started;
    // A test run that ends without stopping it (a failure, a time-out) leaves no pooler behind.
    process.once('exit', () => started.kill('SIGKILL'));
    const until = Date.now() + STARTUP_MS_MAX;
    while (!(await accepting(port))) {
      if (started.exitCode !== null || Date.now() > until)
        throw new Error(`pgbouncer did not start: ${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const stop = async (): Promise<void> => {
    const running = child;
    if (running === undefined || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGTERM');
    await exited;
  };
  await start();

  return {
    urlOf(databaseUrl) {
      const url = new URL(databaseUrl);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return url.toString();
    },
    async restart() {
      await stop();
      await start();
    },
    halt: stop,
    start,
    async stop() {
      await stop();
      await rm(folder, { recursive: true, force: true });
    },
  };
}
