// The commands that start each kind of server: our built CLI (from .build/src, beside this
// compiled file's folder) and the bare baseline.
import { freePort, startServerProcess, type ServerProcess } from './processes.js';
import { BENCH_ACCOUNTS } from './scenarios.js';

const CLI = new URL('../src/cli.js', import.meta.url);
const BASELINE = new URL('./baseline.js', import.meta.url);

export async function startService(
  name: string,
  service: 'todo' | 'bank',
  db: string,
  options: readonly string[] = [],
): Promise<ServerProcess> {
  const port = await freePort();
  const accounts = service === 'bank' ? ['--accounts', BENCH_ACCOUNTS] : [];
  // As shipped: logs at info (one access line per request) and /metrics on; the lines go nowhere.
  const args = [service, '--port', String(port), '--db', db, ...accounts, ...options];
  return startServerProcess(name, CLI, args, port);
}

export async function startBaseline(
  name: string,
  errors: 'default' | 'unified' | 'problem',
  openapiFile: string,
  options: readonly string[] = [],
): Promise<ServerProcess> {
  const port = await freePort();
  return startServerProcess(name, BASELINE, ['--port', String(port), '--errors', errors, '--openapi', openapiFile, '--accounts', BENCH_ACCOUNTS, ...options], port);
}
