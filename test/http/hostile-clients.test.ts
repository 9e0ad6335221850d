// Clients that misbehave at the connection level: they leave in the middle of a body, open
// connections and send nothing, or send one byte of a request's head and no more (slowloris). None
// is a fault of the server, and none may lock others out.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { SILENT_MS } from '../../src/http/connections/connection-guard.js';
import { get, postJson } from '../support/http.js';
import { withServer } from '../support/server.js';
import { startServiceProcess } from '../support/service-process.js';
import { slowloris } from '../support/slowloris.js';

/** Sends the head of a POST announcing 1,000 body bytes, ten of them, and closes the connection. */
function leaveMidBody(url: string, path: string): Promise<void> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"title":`,
      );
      socket.destroy();
    });
    socket.once('close', () => resolve());
    socket.once('error', reject);
  });
}

/** Resolves once check() holds, looking after each short wait; fails after timeout_ms. */
async function eventually(check: () => boolean, what: string, timeout_ms = 10_000): Promise<void> {
  const deadline = Date.now() + timeout_ms;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`not within ${timeout_ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Opens a connection and sends nothing; resolves once it is established (the server may close it later). */
function openSilent(url: string, from = '127.0.0.1'): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), localAddress: from });
    socket.once('connect', () => {
      // Closed by the server from here on is the point; a reset is one way of being closed.
      socket.on('error', () => undefined);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/** This process's own soft limit on open files (Linux), to tell a too-small limit from a failure. */
function ownOpenFilesMax(): number {
  const limit = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
  return limit === undefined ? Infinity : Number(limit);
}

/**
 * Floods a service under ulimit -n 1024 with 1,500 connections opened by `open`, from ten addresses
 * (127.0.0.1 to 127.0.0.10: 150 each, within the bound of one address, so that together they fill
 * the server's table), then goes on opening more while it makes normal requests, each on a new
 * connection from 127.0.0.1: each is answered 200 within a second, and nothing is logged at warn or
 * above.
 */
async function answersUnderFlood(
  open: (url: string, from: string) => Promise<Socket>,
): Promise<void> {
  const floodSize = 1_500;
  assert.ok(
    ownOpenFilesMax() > floodSize + 200,
    'this test opens 1,500 connections itself: raise ulimit -n of the test run',
  );
  const server = await startServiceProcess(['todo', '--db', 'memory'], 1, { openFilesMax: 1024 });
  const flood: Socket[] = [];
  try {
    const url = server.urls[0] as string;
    const from = (k: number): string => `127.0.0.${(k % 10) + 1}`;
    for (let k = 0; k < floodSize; k++) flood.push(await open(url, from(k)));
    for (let round = 0; round < 20; round++) {
      for (let k = 0; k < 25; k++) flood.push(await open(url, from(k)));
      const started = performance.now();
      const res = await get(url, '/todos/1');
      const elapsed_ms = performance.now() - started;
      assert.equal(res.status, 200, `round ${round}`);
      assert.ok(elapsed_ms < 1_000, `round ${round}: answered after ${elapsed_ms.toFixed(0)} ms`);
    }
    // Nothing at warn or above: no error, no stack.
    assert.doesNotMatch(server.output(), /"level":(40|50|60)/, server.output().slice(0, 2000));
  } finally {
    for (const socket of flood) socket.destroy();
    await server.kill();
  }
}

/** A GET on a new connection from `from`: the milliseconds to its 200, or undefined if none came within `limitMs`. */
function answeredFrom(url: string, from: string, limitMs: number): Promise<number | undefined> {
  const { hostname, port } = new URL(url);
  const started = performance.now();
  return new Promise((resolve) => {
    let received = '';
    const socket = connect({ host: hostname, port: Number(port), localAddress: from });
    const timer = setTimeout(() => socket.destroy(), limitMs);
    socket.on('error', () => undefined);
    socket.once('connect', () =>
      socket.write('GET /todos/1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'),
    );
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(received.startsWith('HTTP/1.1 200 ') ? performance.now() - started : undefined);
    });
  });
}

interface LogEntry {
  readonly level?: unknown;
  readonly msg?: unknown;
  readonly status?: unknown;
}

describe('hostile clients', () => {
  test('a client that leaves mid-body costs one info line per request (its access line, 499), no error and no stack', async () => {
    const lines: string[] = [];
    await withServer({ service: 'todo', logLines: lines }, async (url) => {
      const aborted = 25;
      for (let k = 0; k < aborted; k++) await leaveMidBody(url, '/todos');
      await eventually(() => lines.length >= aborted, `${aborted} log lines`);
      // The server goes on answering; the complete request after them writes its own line.
      assert.equal((await postJson(url, '/todos', '{"title":"after"}')).status, 201);
      await eventually(
        () => lines.length >= aborted + 1,
        'the access line of the complete request',
      );
      const entries = lines.map((line) => JSON.parse(line) as LogEntry);
      assert.equal(entries.length, aborted + 1, lines.join(''));
      for (const [k, entry] of entries.slice(0, aborted).entries()) {
        const line = lines[k] ?? '';
        assert.equal(entry.level, 30, `not info: ${line}`);
        assert.equal(entry.status, 499, line);
        assert.doesNotMatch(line, /stack|\n\s+at /, line);
      }
      assert.equal(entries[aborted]?.status, 201);
    });
  });

  test('1,500 silent connections against a server under ulimit -n 1024 leave requests answering within a second', () =>
    answersUnderFlood(openSilent));

  test('1,500 connections that each sent one byte of a request head, under ulimit -n 1024, leave requests answering within a second', () =>
    answersUnderFlood(async (url, from) => {
      const socket = await openSilent(url, from);
      socket.write('G');
      return socket;
    }));

  test('one address holds no more than a quarter of the connections: 300 trickling from it leave 96 open under ulimit -n 512, and 90 from each of two others are all kept', async () => {
    const server = await startServiceProcess(['todo', '--db', 'memory'], 1, { openFilesMax: 512 });
    const sockets: Socket[] = [];
    const stillOpen = (from: readonly Socket[]): number =>
      from.filter((socket) => !socket.destroyed).length;
    try {
      const url = server.urls[0] as string;
      const one = async (from: string): Promise<Socket> => {
        const socket = await openSilent(url, from);
        socket.on('close', () => socket.destroy());
        socket.write('G');
        sockets.push(socket);
        return socket;
      };
      const first: Socket[] = [];
      for (let k = 0; k < 300; k++) first.push(await one('127.0.0.1'));
      await eventually(() => stillOpen(first) <= 96, 'the first address down to its bound');
      const second: Socket[] = [];
      for (let k = 0; k < 180; k++) second.push(await one(k % 2 === 0 ? '127.0.0.2' : '127.0.0.3'));
      await sleep(300);
      // The table (384) has room for all: the bound, not the table, closed the first address's.
      assert.equal(stillOpen(first), 96);
      assert.equal(stillOpen(second), 180);
      assert.deepEqual(
        first.slice(-96).map((socket) => socket.destroyed),
        first.slice(-96).map(() => false),
        'the newest stayed: each newcomer took the place of its own oldest',
      );
    } finally {
      for (const socket of sockets) socket.destroy();
      await server.kill();
    }
  });

  test('--connections-per-client sets the bound of one address, and 0 lifts it', async () => {
    for (const [bound, kept] of [
      ['3', 3],
      ['0', 8],
    ] as const) {
      const server = await startServiceProcess([
        'todo',
        '--db',
        'memory',
        '--connections-per-client',
        bound,
      ]);
      const sockets: Socket[] = [];
      try {
        const url = server.urls[0] as string;
        for (let k = 0; k < 8; k++) {
          const socket = await openSilent(url);
          socket.on('close', () => socket.destroy());
          socket.write('G');
          sockets.push(socket);
        }
        await eventually(
          () => sockets.filter((socket) => !socket.destroyed).length <= kept,
          `down to ${kept}`,
        );
        await sleep(200);
        assert.equal(sockets.filter((socket) => !socket.destroyed).length, kept, bound);
      } finally {
        for (const socket of sockets) socket.destroy();
        await server.kill();
      }
    }
  });

  test('under a slowloris with connection churn from one address, at least 95 % of new connections from other addresses are answered', async (t) => {
    // A table of 384 connections (ulimit -n 512, less 128 kept): the attacker tries to hold 500.
    const server = await startServiceProcess(['todo', '--db', 'memory'], 1, { openFilesMax: 512 });
    const url = server.urls[0] as string;
    const attack = slowloris(url, 500);
    let opened = 0;
    try {
      await sleep(1_000);
      const outcomes: (number | undefined)[] = [];
      // Ten legitimate clients, 127.0.0.2 to 127.0.0.11, each ten new connections one after another.
      await Promise.all(
        Array.from({ length: 10 }, async (_, k) => {
          for (let n = 0; n < 10; n++) {
            outcomes.push(await answeredFrom(url, `127.0.0.${k + 2}`, 5_000));
            await sleep(20);
          }
        }),
      );
      opened = await attack.stop();
      const times = outcomes.filter((ms) => ms !== undefined).sort((a, b) => a - b);
      const share = times.length / outcomes.length;
      const said = `${times.length} of ${outcomes.length} answered (median ${times[times.length >> 1]?.toFixed(0)} ms, slowest ${times.at(-1)?.toFixed(0)} ms); the attacker opened ${opened} connections`;
      t.diagnostic(said);
      assert.ok(opened >= 1_000, `a real attack: ${said}`);
      assert.ok(share >= 0.95, said);
    } finally {
      if (opened === 0) await attack.stop().catch(() => 0);
      await server.kill();
    }
  });

  test('a head trickled a byte at a time is answered 408 and closed 10 to 11 s after its first byte, however it keeps trickling', () =>
    withServer({ service: 'todo' }, async (url) => {
      const socket = await openSilent(url);
      let received = '';
      socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
      const head = 'GET /todos/1 HTTP/1.1\r\nHost: x\r\nX-Padding: ';
      socket.write(head.charAt(0));
      const firstByte = performance.now();
      let sent = 1;
      const trickle = setInterval(() => socket.write(head.charAt(sent++) || 'a'), 250);
      try {
        await new Promise((resolve) => socket.once('close', resolve));
      } finally {
        clearInterval(trickle);
      }
      const elapsed_ms = performance.now() - firstByte;
      assert.ok(
        elapsed_ms >= 9_900 && elapsed_ms < 12_500,
        `closed after ${elapsed_ms.toFixed(0)} ms`,
      );
      assert.match(received, /^HTTP\/1\.1 408 /);
    }));

  test("a connection that sends nothing is closed after a few seconds, not the 10 to 40 of Node's defaults", () =>
    withServer({ service: 'todo' }, async (url) => {
      const socket = await openSilent(url);
      const opened = performance.now();
      await new Promise((resolve) => socket.once('close', resolve));
      const elapsed_ms = performance.now() - opened;
      assert.ok(
        elapsed_ms >= SILENT_MS - 100 && elapsed_ms < SILENT_MS + 2_500,
        `closed after ${elapsed_ms.toFixed(0)} ms`,
      );
      assert.equal((await get(url, '/todos/1')).status, 200);
    }));
});
