// What an idle connection costs a server in memory: on a fresh server, warmed up, open many
// keep-alive connections, each answered once and then left idle, and read how much the process's
// resident memory (VmRSS) grew, per connection, within the keep-alive time-out (5 s here). Before
// each reading the server collects its garbage (collect-on-signal.ts), so that what is counted is
// what the process keeps for the connections, not the garbage their requests left behind, which
// depends on when V8 last collected. The kernel's socket buffers are not in it.
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import type { ServerProcess, StartOptions } from './processes.js';
import { drive } from './load.js';
import { median } from './stats.js';

export const IDLE_CONNECTIONS = 4000;
/** Connections opened at once while filling. */
const OPENING_AT_ONCE = 100;

function readRss(pid: number): number {
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (match === null) throw new Error(`no VmRSS for process ${pid}`);
  return Number(match[1]) * 1024;
}

/** Opens `count` connections, each sends one request and reads its answer (a few hundred bytes, one read), and is kept. */
async function openIdle(url: string, path: string, count: number): Promise<Socket[]> {
  const { hostname, port } = new URL(url);
  const requestText = `GET ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`;
  const one = (): Promise<Socket> =>
    new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => socket.write(requestText));
      socket.once('data', () => resolve(socket));
      socket.once('error', reject);
    });
  const sockets: Socket[] = [];
  while (sockets.length < count)
    sockets.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(OPENING_AT_ONCE, count - sockets.length) }, one),
      )),
    );
  return sockets;
}

export interface IdleCost {
  readonly connections: number;
  /** Resident memory growth per idle connection, in bytes. */
  readonly bytesPerConnection: number;
}

/** How a measured server is started: able to collect its garbage when told (SIGUSR2). */
export const COLLECTABLE: StartOptions = {
  nodeOptions: [
    '--expose-gc',
    '--min-semi-space-size=16',
    '--max-semi-space-size=16',
    '--import',
    new URL('./collect-on-signal.js', import.meta.url).href,
  ],
};

/** Full collections in the server, then its resident memory. */
async function collectedRss(server: ServerProcess): Promise<number> {
  process.kill(server.pid, 'SIGUSR2');
  await new Promise((resolve) => setTimeout(resolve, 500));
  return readRss(server.pid);
}

const TRIALS = 3;
const WARMUP_REQUESTS = 5000;

/**
 * On each of TRIALS fresh servers: WARMUP_REQUESTS requests on 10 connections (code compiled, the
 * heap at its working size), then `count` connections opened, each answered once and left idle.
 * The figure is the median of the trials' growth of resident memory per connection.
 */
export async function idleConnectionCost(
  start: () => Promise<ServerProcess>,
  path: string,
  count = IDLE_CONNECTIONS,
): Promise<IdleCost> {
  const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 500));
  const figures: number[] = [];
  for (let trial = 0; trial < TRIALS; trial++) {
    const server = await start();
    try {
      await drive(
        server.url,
        { method: 'GET', path },
        { connections: 10, amount: WARMUP_REQUESTS, expectedStatus: 200 },
      );
      await settle();
      const before = await collectedRss(server);
      const sockets = await openIdle(server.url, path, count);
      const after = await collectedRss(server);
      const open = sockets.filter((socket) => !socket.destroyed).length;
      for (const socket of sockets) socket.destroy();
      if (open < count * 0.99)
        throw new Error(`${server.name}: only ${open} of ${count} connections stayed open`);
      figures.push((after - before) / open);
    } finally {
      await server.stop();
    }
  }
  return { connections: count, bytesPerConnection: median(figures) };
}
