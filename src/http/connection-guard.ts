// Connections are a resource like memory: each one holds a file descriptor, and a process that has
// used all of its descriptors can accept no one and open no file. A client that opens connections and
// sends nothing costs nothing to send, so the server keeps the count below its descriptor limit and
// lets the silent go first: a socket that has sent no byte is closed after SILENT_MS, and at once
// when a newcomer needs its place. A connection that has sent something is left to Node's own
// timeouts (headers, request, keep-alive).
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
    const line = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync(sources.limitsFile, 'utf8'))?.[1];
    if (line !== undefined) return line === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(line);
  } catch {
    // Not Linux: ask the shell, which inherits our limits.
  }
  const shell = spawnSync(sources.shell, ['-c', 'ulimit -n'], { encoding: 'utf8' });
  const text = shell.status === 0 ? shell.stdout.trim() : '';
  if (text === 'unlimited') return Number.MAX_SAFE_INTEGER;
  return /^\d+$/.test(text) ? Number(text) : OPEN_FILES_ASSUMED;
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

  server.on('connection', (socket: Socket) => {
    if (sockets.size >= limits.connectionsMax && !evictOneSilent()) {
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

  const sweep = setInterval(() => {
    const cutoff = Date.now() - limits.silentMs;
    for (const [socket, since] of silent) {
      if (socket.bytesRead > 0) silent.delete(socket);
      else if (since > cutoff) break;
      else {
        silent.delete(socket);
        socket.destroy();
      }
    }
  }, Math.min(1_000, limits.silentMs)).unref();
  server.once('close', () => clearInterval(sweep));
}
