// Connections are a resource like memory: each one holds a file descriptor, and a process that has
// used all of its descriptors can accept no one and open no file. A client that opens connections
// and sends nothing costs nothing to send, so the server keeps the count below its descriptor limit
// and lets the silent go first: a socket that has sent no byte is closed after SILENT_MS, and at
// once when a newcomer needs its place.
//
// A client that sends one byte of a request's head now and then (slowloris) costs hardly more, and
// Node's header time-out (10 s) lets it hold its place that long, renewable. So when no silent
// connection is left to give way, a newcomer takes the place of the oldest connection that is not
// being answered: one still sending the head of its request, or one idle between two requests. A
// legitimate client sends its head within milliseconds of connecting and is then being answered, so
// the connections that give way are the slow ones, oldest first, whatever rate they trickle at; a
// request being answered (its head whole, its body being read, its response being written) is never
// cut. This costs nothing until the table is full, where a minimum rate would count the bytes of
// every read of every connection, and a patient client sending at that rate would still hold its
// place. Past the table, Node's own time-outs (headers, request, keep-alive) still apply.
//
// That alone lets one attacker fill the table and then race every newcomer for its place: one that
// reopens each connection it loses takes back the place of a newcomer that had not yet sent its head.
// So one client address may hold only part of the table (nginx's limit_conn, per connection rather
// than per request): its newcomer beyond that takes the place of its own oldest connection not being
// answered, never another address's, and is closed only when every one of its connections is being
// answered. Then a slowloris from one address churns its own part, and the rest of the table stays
// open to everyone else. The trusted proxies, which carry many clients each, are held to the table
// alone. A refused newcomer is closed, not answered: it is refused on arrival, before a byte of its
// request is read, and an answer would mean handing the socket to the HTTP parser, which would run
// the request.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { isIP, type BlockList, type Socket } from 'node:net';
import { peerAddress } from './ip-address.js';

export interface ConnectionLimits {
  /** Connections open at once; a newcomer beyond it takes a silent one's place, or is closed. */
  readonly connectionsMax: number;
  /**
   * Connections one client address may hold at once (see connectionsPerClientFor); a newcomer
   * beyond it takes the place of the address's own oldest connection not being answered, or is
   * closed. 0 or none: no bound but connectionsMax.
   */
  readonly connectionsPerClient?: number;
  /** Peers held to connectionsMax alone: the trusted proxies, each of which carries many clients. */
  readonly unboundedPeers?: readonly BlockList[];
  /** A connection that has sent no byte for this long is closed. */
  readonly silentMs: number;
  /** Where refusals over an address's bound are told, at most once a minute. */
  readonly warn?: (message: string, fields: Record<string, unknown>) => void;
}

export const SILENT_MS = 5_000;

/** No address may hold more than this share of a server's connections: it takes four to fill them. */
const CLIENT_SHARE = 4;

/** The default bound of one client address: a quarter of the server's connections, at least one. */
export function connectionsPerClientFor(connectionsMax: number): number {
  return Math.max(1, Math.floor(connectionsMax / CLIENT_SHARE));
}

/** Descriptors kept for everything that is not a client connection: files, database sockets, pipes, threads. */
const DESCRIPTORS_RESERVED = 128;

/**
 * How many client connections `shares` servers in this process may hold together, each getting an
 * equal part: the soft limit on open files (ulimit -n) less what the process needs besides, and
 * never more than half of a small limit.
 */
export function connectionsMaxFor(shares: number, limit = openFilesLimit()): number {
  const reserved = Math.min(DESCRIPTORS_RESERVED, Math.floor(limit / 2));
  return Math.max(1, Math.floor((limit - reserved) / shares));
}

/** Where the limit is read: the kernel's table of this process's limits, else a shell's `ulimit -n`. */
export interface LimitSources {
  readonly limitsFile: string;
  readonly shell: string;
}

const SYSTEM: LimitSources = { limitsFile: '/proc/self/limits', shell: 'sh' };

/** What is assumed when neither source answers: Linux's usual soft limit. */
export const OPEN_FILES_ASSUMED = 1024;

/** The soft limit on open files: from /proc on Linux, else from the shell's ulimit, else 1024. */
export function openFilesLimit(sources: LimitSources = SYSTEM): number {
  try {
    const line = /^Max open files\s+(\d+|unlimited)/m.exec(
      readFileSync(sources.limitsFile, 'utf8'),
    )?.[1];
    if (line !== undefined) return line === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(line);
  } catch {
    // Not Linux: ask the shell, which inherits our limits.
  }
  const shell = spawnSync(sources.shell, ['-c', 'ulimit -n'], { encoding: 'utf8' });
  const text = shell.status === 0 ? shell.stdout.trim() : '';
  if (text === 'unlimited') return Number.MAX_SAFE_INTEGER;
  return /^\d+$/.test(text) ? Number(text) : OPEN_FILES_ASSUMED;
}

/** What node:http sets on a connection while it answers a request on it. */
interface HttpSocket {
  readonly _httpMessage?: unknown;
}

/**
 * True while node:http answers a request on the connection: from the moment its head is whole until
 * its response is written. node:http has no public flag for it; `_httpMessage` is the response it
 * attaches to the socket for that time (and clears after), which connection-draining libraries
 * read as well. test/http/connection-guard.test.ts would see it change.
 */
function beingResponded(socket: Socket): boolean {
  const message = (socket as unknown as HttpSocket)._httpMessage;
  return message !== undefined && message !== null;
}

/** Refusals over an address's bound, told at most once a minute with the count since the last. */
const WARN_EVERY_MS = 60_000;

/** Applies the limits to the server's connections; the sweep stops when the server closes. */
export function guardConnections(server: Server, limits: ConnectionLimits): void {
  // Every connection, oldest first, with its client's address; and each address's, oldest first.
  const open = new Map<Socket, string>();
  const byClient = new Map<string, Set<Socket>>();
  // Connections that had sent nothing when last looked at, oldest first, with when they came.
  const silent = new Map<Socket, number>();
  const perClient = limits.connectionsPerClient ?? 0;
  const unbounded = limits.unboundedPeers;
  let refusedSinceWarn = 0;
  let warnedMs = -Infinity;

  function forget(socket: Socket): void {
    const client = open.get(socket);
    open.delete(socket);
    silent.delete(socket);
    if (client === undefined) return;
    const own = byClient.get(client);
    own?.delete(socket);
    if (own?.size === 0) byClient.delete(client);
  }

  function close(socket: Socket): void {
    forget(socket);
    socket.destroy();
  }

  /** Closes the oldest connection that is still silent; false if there is none. */
  function evictOneSilent(): boolean {
    for (const socket of silent.keys()) {
      silent.delete(socket);
      if (socket.bytesRead === 0) {
        close(socket);
        return true;
      }
    }
    return false;
  }

  /** Closes the oldest of `sockets` that no response is being written to; false if every one has one. */
  function evictOneSlow(sockets: Iterable<Socket>): boolean {
    for (const socket of sockets) {
      if (beingResponded(socket)) continue;
      close(socket);
      return true;
    }
    return false;
  }

  /** True when `client` may hold no more than perClient connections. */
  function bounded(client: string): boolean {
    if (perClient <= 0) return false;
    if (unbounded === undefined || unbounded.length === 0) return true;
    const family = isIP(client);
    const type = family === 6 ? 'ipv6' : 'ipv4';
    return family === 0 || !unbounded.some((list) => list.check(client, type));
  }

  function refusedOverBound(): void {
    refusedSinceWarn += 1;
    const nowMs = Date.now();
    if (limits.warn === undefined || nowMs - warnedMs < WARN_EVERY_MS) return;
    limits.warn("connections refused over their address's bound", {
      refused: refusedSinceWarn,
      connectionsPerClient: perClient,
      sinceMs: Number.isFinite(warnedMs) ? nowMs - warnedMs : undefined,
    });
    warnedMs = nowMs;
    refusedSinceWarn = 0;
  }

  /** Makes room for a newcomer from `client`, if there is any to make. */
  function admits(client: string): boolean {
    const own = byClient.get(client);
    if (own !== undefined && own.size >= perClient && bounded(client) && !evictOneSlow(own)) {
      refusedOverBound();
      return false;
    }
    return open.size < limits.connectionsMax || evictOneSilent() || evictOneSlow(open.keys());
  }

  server.on('connection', (socket: Socket) => {
    const remote = socket.remoteAddress;
    const client = remote === undefined ? '' : peerAddress(remote);
    if (remote === undefined || !admits(client)) {
      socket.destroy();
      return;
    }
    open.set(socket, client);
    silent.set(socket, Date.now());
    const own = byClient.get(client);
    if (own === undefined) byClient.set(client, new Set([socket]));
    else own.add(socket);
    socket.once('close', () => forget(socket));
  });

  const sweep = setInterval(
    () => {
      const cutoff = Date.now() - limits.silentMs;
      for (const [socket, since] of silent) {
        if (socket.bytesRead > 0) silent.delete(socket);
        else if (since > cutoff) break;
        else close(socket);
      }
    },
    Math.min(1_000, limits.silentMs),
  ).unref();
  server.once('close', () => clearInterval(sweep));
}
