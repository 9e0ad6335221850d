// The connection guard (src/http/connections/connection-guard.ts) on a real node:http server with small limits:
// which connection gives way to a newcomer (the silent, then the slow, never one being answered),
// when a silent one is closed, how many one client address may hold, and how the limit is shared.
// The same under a real descriptor limit (ulimit -n) is in hostile-clients.test.ts.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { BlockList, connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  connectionsMaxFor,
  connectionsPerClientFor,
  guardConnections,
  OPEN_FILES_ASSUMED,
  openFilesLimit,
} from '../../src/http/connections/connection-guard.js';
import { ConfigError, readConfig } from '../../src/config.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

const SILENT_MS = 1_000;

interface Client {
  readonly socket: Socket;
  /** Resolves when the server closed the connection. */
  readonly closed: Promise<void>;
  isClosed(): boolean;
}

async function client(port: number, from = '127.0.0.1'): Promise<Client> {
  const socket = connect({ port, host: '127.0.0.1', localAddress: from });
  socket.on('error', () => undefined);
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  let closed = false;
  const done = new Promise<void>((resolve) =>
    socket.once('close', () => ((closed = true), resolve())),
  );
  return { socket, closed: done, isClosed: () => closed };
}

/** A whole GET on `c`, answered: the connection works. */
async function answered(c: Client): Promise<string> {
  const data = new Promise<string>((resolve) =>
    c.socket.once('data', (chunk: Buffer) => resolve(chunk.toString('latin1'))),
  );
  c.socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  return (await data).split('\r\n')[0] ?? '';
}

/** Lets the server see what the clients did (a connection accepted, a byte read). */
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 50));

describe('the connection guard', { timeout: SUITE_TIMEOUT_MS }, () => {
  let server: Server;
  let port: number;
  const clients: Client[] = [];
  const held: ServerResponse[] = [];
  const release = (): void => {
    for (const res of held.splice(0)) res.end('ok');
  };
  const open = async (): Promise<Client> => {
    const c = await client(port);
    clients.push(c);
    await settle();
    return c;
  };

  before(async () => {
    // GET /hold is answered only when the test releases it: a request being answered meanwhile.
    server = createServer((req, res) => {
      if (req.url === '/hold') held.push(res);
      else res.end('ok');
    });
    guardConnections(server, { connectionsMax: 3, silentMs: SILENT_MS });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  after(async () => {
    for (const c of clients) c.socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const closeAll = async (): Promise<void> => {
    for (const c of clients.splice(0)) {
      c.socket.destroy();
      await c.closed;
    }
    await settle();
  };

  test('a newcomer beyond the limit takes the place of the oldest connection that has sent nothing', async () => {
    const [oldest, second, third] = [await open(), await open(), await open()];
    const newcomer = await open();
    await oldest?.closed;
    assert.deepEqual([second?.isClosed(), third?.isClosed()], [false, false]);
    assert.equal(await answered(newcomer), 'HTTP/1.1 200 OK');
    await closeAll();
  });

  test('with no silent connection left, a newcomer takes the place of the oldest one still sending the head of its request', async () => {
    const trickling = await open();
    trickling.socket.write('G');
    const silent = await open();
    const alsoTrickling = await open();
    alsoTrickling.socket.write('G');
    await settle();
    const newcomer = await open();
    await silent.closed;
    assert.deepEqual(
      [trickling.isClosed(), alsoTrickling.isClosed(), newcomer.isClosed()],
      [false, false, false],
      'the silent one went first',
    );
    newcomer.socket.write('G');
    await settle();
    const next = await open();
    await trickling.closed;
    assert.deepEqual(
      [alsoTrickling.isClosed(), newcomer.isClosed(), next.isClosed()],
      [false, false, false],
      'the oldest trickling one went, no other',
    );
    assert.equal(await answered(next), 'HTTP/1.1 200 OK');
    await closeAll();
  });

  test('a connection whose request is being answered keeps its place: when every one is, the newcomer is closed', async () => {
    const held = [await open(), await open(), await open()];
    for (const c of held) c.socket.write('GET /hold HTTP/1.1\r\nHost: x\r\n\r\n');
    await settle();
    const refused = await open();
    const refusedAtOnce = await Promise.race([
      refused.closed.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), SILENT_MS / 2)),
    ]);
    assert.equal(refusedAtOnce, true, 'closed at once, not left to the silent sweep');
    assert.deepEqual(
      held.map((c) => c.isClosed()),
      [false, false, false],
      'no connection being answered was closed for it',
    );
    release();
    await closeAll();
  });

  test('a connection that sends nothing is closed once it has been silent for silentMs; one that sent something is not', async () => {
    const startedMs = performance.now();
    const silent = await open();
    const talking = await open();
    talking.socket.write('G');
    await silent.closed;
    const tookMs = performance.now() - startedMs;
    assert.ok(
      tookMs >= SILENT_MS - 20 && tookMs < SILENT_MS + 1_500,
      `closed after ${Math.round(tookMs)} ms`,
    );
    await new Promise((resolve) => setTimeout(resolve, SILENT_MS + 1_100));
    assert.equal(talking.isClosed(), false);
    await closeAll();
  });

  test('a closed connection frees its place at once', async () => {
    const first = await open();
    first.socket.write('G');
    const second = await open();
    second.socket.write('G');
    const third = await open();
    third.socket.write('G');
    await settle();
    first.socket.destroy();
    await first.closed;
    await settle();
    const newcomer = await open();
    assert.equal(await answered(newcomer), 'HTTP/1.1 200 OK');
    assert.deepEqual([second.isClosed(), third.isClosed()], [false, false]);
    await closeAll();
  });
});

describe('the bound of one client address', { timeout: SUITE_TIMEOUT_MS }, () => {
  const PER_CLIENT = 2;
  const PROXY = '127.0.0.4';
  let server: Server;
  let port: number;
  const warnings: Record<string, unknown>[] = [];
  const clients: Client[] = [];
  const held: ServerResponse[] = [];
  const open = async (from: string): Promise<Client> => {
    const c = await client(port, from);
    clients.push(c);
    await settle();
    return c;
  };
  const closeAll = async (): Promise<void> => {
    for (const res of held.splice(0)) res.end('ok');
    for (const c of clients.splice(0)) {
      c.socket.destroy();
      await c.closed;
    }
    await settle();
  };

  before(async () => {
    server = createServer((req, res) => {
      if (req.url === '/hold') held.push(res);
      else res.end('ok');
    });
    const unboundedPeers = new BlockList();
    unboundedPeers.addAddress(PROXY);
    guardConnections(server, {
      connectionsMax: 20,
      connectionsPerClient: PER_CLIENT,
      unboundedPeers: [unboundedPeers],
      silentMs: SILENT_MS,
      warn: (_message, fields) => void warnings.push(fields),
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  after(async () => {
    await closeAll();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  test("an address at its bound: its newcomer takes the place of its own oldest connection not being answered, never another address's", async () => {
    const other = await open('127.0.0.2');
    const oldest = await open('127.0.0.1');
    oldest.socket.write('G');
    const second = await open('127.0.0.1');
    const newcomer = await open('127.0.0.1');
    await oldest.closed;
    assert.deepEqual(
      [other.isClosed(), second.isClosed(), newcomer.isClosed()],
      [false, false, false],
    );
    assert.equal(await answered(newcomer), 'HTTP/1.1 200 OK');
    assert.equal(await answered(other), 'HTTP/1.1 200 OK');
    assert.deepEqual(warnings, [], 'taking its own place is no refusal');
    await closeAll();
  });

  test('an address whose every connection is being answered has its newcomer closed at once, told once a minute; another address is admitted', async () => {
    const busy = [await open('127.0.0.1'), await open('127.0.0.1')];
    for (const c of busy) c.socket.write('GET /hold HTTP/1.1\r\nHost: x\r\n\r\n');
    await settle();
    const refused = [await open('127.0.0.1'), await open('127.0.0.1')];
    const refusedAtOnce = await Promise.race([
      Promise.all(refused.map((c) => c.closed)).then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), SILENT_MS / 2)),
    ]);
    assert.equal(refusedAtOnce, true, 'closed at once, not left to the silent sweep');
    assert.deepEqual(
      busy.map((c) => c.isClosed()),
      [false, false],
    );
    assert.equal(await answered(await open('127.0.0.3')), 'HTTP/1.1 200 OK');
    assert.equal(warnings.length, 1, JSON.stringify(warnings));
    assert.deepEqual(
      { ...warnings[0], sinceMs: undefined },
      { refused: 1, connectionsPerClient: PER_CLIENT, sinceMs: undefined },
    );
    await closeAll();
  });

  test('a peer in unboundedPeers (a trusted proxy) is held to the table alone', async () => {
    const many = [];
    for (let k = 0; k < PER_CLIENT * 3; k++) many.push(await open(PROXY));
    await settle();
    assert.deepEqual(
      many.map((c) => c.isClosed()),
      many.map(() => false),
    );
    await closeAll();
  });

  test('by default an address may hold a quarter of the connections of its server, at least one', () => {
    assert.equal(connectionsPerClientFor(896), 224);
    assert.equal(connectionsPerClientFor(384), 96);
    assert.equal(connectionsPerClientFor(7), 1);
    assert.equal(connectionsPerClientFor(1), 1);
  });
});

describe('--connections-per-client', () => {
  test('is read from the option or SVC_CONNECTIONS_PER_CLIENT; unset leaves the default to the server', () => {
    assert.equal(readConfig([], {}).connectionsPerClient, undefined);
    assert.equal(readConfig(['--connections-per-client', '64'], {}).connectionsPerClient, 64);
    assert.equal(readConfig([], { SVC_CONNECTIONS_PER_CLIENT: '0' }).connectionsPerClient, 0);
    assert.equal(
      readConfig(['--connections-per-client=8'], { SVC_CONNECTIONS_PER_CLIENT: '9' })
        .connectionsPerClient,
      8,
    );
  });

  test('anything but a whole number from 0 to 999999 stops the service with one line', () => {
    for (const text of ['-1', 'many', '1.5', '1000000', '1e3']) {
      assert.throws(
        () => readConfig(['--connections-per-client', text], {}),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.message ===
            `--connections-per-client must be a whole number from 0 to 999999, not "${text}"`,
        text,
      );
    }
  });
});

describe('how many connections a server may hold', () => {
  test("the process's open-files limit less 128 reserved descriptors, shared equally by its servers, at least one each", () => {
    const line = /^Max open files\s+(\d+|unlimited)/m.exec(
      readFileSync('/proc/self/limits', 'utf8'),
    )?.[1];
    assert.ok(line !== undefined && line !== 'unlimited', 'a Linux machine with a finite limit');
    const limit = Number(line);
    const reserved = Math.min(128, Math.floor(limit / 2));
    assert.equal(openFilesLimit(), limit);
    assert.equal(connectionsMaxFor(1), limit - reserved);
    assert.equal(connectionsMaxFor(2), Math.floor((limit - reserved) / 2));
    assert.equal(connectionsMaxFor(3), Math.floor((limit - reserved) / 3));
    assert.equal(connectionsMaxFor(Number.MAX_SAFE_INTEGER), 1);
  });

  test('under a limit of 256 or less, half of it is reserved rather than 128', () => {
    assert.equal(connectionsMaxFor(1, 256), 128);
    assert.equal(connectionsMaxFor(1, 200), 100);
    assert.equal(connectionsMaxFor(2, 101), 25); // 50 reserved, 51 shared by two
    assert.equal(connectionsMaxFor(1, 257), 129);
    assert.equal(connectionsMaxFor(1, 1), 1);
  });
});

describe('where the open-files limit is read', () => {
  const dir = mkdtempSync(join(tmpdir(), 'limits-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string, mode = 0o644): string => {
    const path = join(dir, name);
    writeFileSync(path, text, { mode });
    return path;
  };
  /** A stand-in for sh: answers `-c 'ulimit -n'` with `output` and exits with `status`. */
  const shell = (name: string, output: string, status = 0): string =>
    file(name, `#!/bin/sh\nprintf '%s\\n' '${output}'\nexit ${status}\n`, 0o755);
  const LIMITS_TABLE = (soft: string): string =>
    `Limit                     Soft Limit           Hard Limit           Units     \n` +
    `Max cpu time              unlimited            unlimited            seconds   \n` +
    `Max open files            ${soft}                 1048576              files     \n`;
  const missing = join(dir, 'no-such-file');
  const noShell = join(dir, 'no-such-shell');

  test("the kernel's table gives the soft limit, the row of open files and no other", () => {
    assert.equal(
      openFilesLimit({ limitsFile: file('finite', LIMITS_TABLE('4096')), shell: noShell }),
      4096,
    );
  });

  test('an unlimited soft limit is taken as no limit', () => {
    assert.equal(
      openFilesLimit({ limitsFile: file('unlimited', LIMITS_TABLE('unlimited')), shell: noShell }),
      Number.MAX_SAFE_INTEGER,
    );
  });

  test('without the table (not Linux), the shell is asked, as sh -c "ulimit -n"', () => {
    const own = spawnSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).stdout.trim();
    assert.equal(openFilesLimit({ limitsFile: missing, shell: 'sh' }), Number(own));
    assert.equal(openFilesLimit({ limitsFile: missing, shell: shell('says-2048', '2048') }), 2048);
  });

  test('a table without the row of open files also asks the shell', () => {
    assert.equal(
      openFilesLimit({
        limitsFile: file('no-row', 'Limit Soft Hard\n'),
        shell: shell('says-300', '300'),
      }),
      300,
    );
  });

  test("the shell's unlimited is no limit", () => {
    assert.equal(
      openFilesLimit({ limitsFile: missing, shell: shell('says-unlimited', 'unlimited') }),
      Number.MAX_SAFE_INTEGER,
    );
  });

  test('a shell that fails, is missing or answers nonsense leaves the usual 1024', () => {
    assert.equal(OPEN_FILES_ASSUMED, 1024);
    assert.equal(openFilesLimit({ limitsFile: missing, shell: shell('fails', '2048', 1) }), 1024);
    assert.equal(openFilesLimit({ limitsFile: missing, shell: noShell }), 1024);
    assert.equal(openFilesLimit({ limitsFile: missing, shell: shell('nonsense', 'many') }), 1024);
    assert.equal(
      openFilesLimit({ limitsFile: missing, shell: shell('partly', '2048 files') }),
      1024,
    );
    assert.equal(
      openFilesLimit({ limitsFile: missing, shell: shell('wordy', 'about 2048') }),
      1024,
    );
  });
});
