// The commands that start each kind of server, natively: our built CLI (from .build/src, beside
// this compiled file's folder), the bare baseline and the Fastify peer.
import {
  freePort,
  startServerProcess,
  type ServerProcess,
  type StartOptions,
} from './processes.js';
import { BENCH_ACCOUNTS } from './scenarios.js';

const CLI = new URL('../src/cli.js', import.meta.url);
const BASELINE = new URL('./baseline.js', import.meta.url);
const PEER = new URL('./fastify-peer.js', import.meta.url);

/** As shipped: logs at info (one access line per request), /metrics on; the lines go nowhere. */
export async function startService(
  name: string,
  service: 'todo' | 'bank',
  db: string,
  options: readonly string[] = [],
  start?: StartOptions,
): Promise<ServerProcess> {
  const port = await freePort();
  const accounts = service === 'bank' ? ['--accounts', BENCH_ACCOUNTS] : [];
  return startServerProcess(
    name,
    CLI,
    [service, '--port', String(port), '--db', db, ...accounts, ...options],
    port,
    start,
  );
}

export async function startBaseline(
  name: string,
  options: readonly string[] = [],
  start?: StartOptions,
): Promise<ServerProcess> {
  const port = await freePort();
  return startServerProcess(
    name,
    BASELINE,
    ['--port', String(port), '--accounts', BENCH_ACCOUNTS, ...options],
    port,
    start,
  );
}

/** The Fastify 5 peer, reading GET /todos/1 from its own SQLite file. */
export async function startPeer(name: string, dbFile: string): Promise<ServerProcess> {
  const port = await freePort();
  return startServerProcess(name, PEER, ['--port', String(port), '--db', dbFile], port);
}
