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
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionLimits {
  /** Connections open at once; a newcomer beyond it takes a silent one's place, or is closed. */
  readonly connectionsMax: number;
  /** A connection that has sent no byte for this long is closed. */
  readonly silentMs: number;
}

export const SILENT_MS = 5_000;

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

/** Applies the limits to the server's connections; the sweep stops when the server closes. */
export function guardConnections(server: Server, limits: ConnectionLimits): void {
  const sockets = new Set<Socket>();
  // Connections that had sent nothing when last looked at, oldest first, with when they came.
  const silent = new Map<Socket, number>();

  /** Closes the oldest connection that is still silent; false if there is none. */
  function evictOneSilent(): boolean {
    for (const socket of silent.keys()) {
      silent.delete(socket);
      if (socket.bytesRead === 0) {
        sockets.delete(socket);
        socket.destroy();
        return true;
      }
    }
    return false;
  }

  /** Closes the oldest connection that no response is being written to; false if every one has one. */
  function evictOneSlow(): boolean {
    for (const socket of sockets) {
      if (beingResponded(socket)) continue;
      sockets.delete(socket);
      socket.destroy();
      return true;
    }
    return false;
  }

  server.on('connection', (socket: Socket) => {
    if (sockets.size >= limits.connectionsMax && !evictOneSilent() && !evictOneSlow()) {
      socket.destroy();
      return;
    }
    sockets.add(socket);
    silent.set(socket, Date.now());
    socket.once('close', () => {
      sockets.delete(socket);
      silent.delete(socket);
    });
  });

  const sweep = setInterval(
    () => {
      const cutoff = Date.now() - limits.silentMs;
      for (const [socket, since] of silent) {
        if (socket.bytesRead > 0) silent.delete(socket);
        else if (since > cutoff) break;
        else {
          silent.delete(socket);
          socket.destroy();
        }
      }
    },
    Math.min(1_000, limits.silentMs),
  ).unref();
  server.once('close', () => clearInterval(sweep));
}
