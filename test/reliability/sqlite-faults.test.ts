// A SQLite file that fails under a running service: a damaged page, a full disk, a read-only file.
// Each is answered for what it is, in the active format, without a stack per request; the process
// never dies of it; /readyz follows it; and nothing acknowledged is lost or half-written.
import Database from 'better-sqlite3';
import assert from 'node:assert/strict';
import {
  chmodSync,
  closeSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openLedger } from '../../src/bank/service.js';
import { openTodoStore } from '../../src/todo/service.js';
import { get, json, send, type RawResponse } from '../support/http.js';
import { reachableCopy, type ReachableCopy } from '../support/reachable-copy.js';
import { runCli, startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { mountTmpfs, tmpfsSkip, type Tmpfs } from '../support/tmpfs.js';

const UNIFIED_503 = { error: { code: 'HTTP_503', message: 'Service Unavailable' } };
const DEFAULT_503 = { detail: 'Service Unavailable' };
const READY_BOUND_MS = 5_000;
/** The user `nobody`, as whom the service runs when the tests run as root. */
const NOBODY = 65534;

function assertUnavailable(answer: RawResponse, body: unknown, what: string): void {
  assert.equal(answer.status, 503, `${what}: ${answer.text}`);
  assert.equal(answer.headers['content-type'], 'application/json', what);
  assert.equal(answer.headers['retry-after'], '1', what);
  assert.deepEqual(json(answer), body, what);
}

async function waitUntilReady(url: string): Promise<void> {
  const started = performance.now();
  while ((await get(url, '/readyz')).status !== 200) {
    if (performance.now() - started > READY_BOUND_MS)
      assert.fail(`not ready ${READY_BOUND_MS} ms after the fault ended`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const lines = (output: string, pattern: RegExp): number =>
  output.split('\n').filter((line) => pattern.test(line)).length;

async function stillAlive(service: ServiceProcess): Promise<void> {
  // One more round trip: the deferred end of the failed read's transaction has run by then.
  assert.equal((await get(service.urls[0] as string, '/healthz')).status, 200);
  assert.equal(await Promise.race([service.exited, Promise.resolve('alive')]), 'alive');
}

describe('a damaged SQLite file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sqlite-corrupt-'));
  const file = join(dir, 'todo.sqlite');
  let leaves: number[] = [];
  let pageSize = 4096;
  const services: ServiceProcess[] = [];

  before(async () => {
    const store = await openTodoStore({ kind: 'sqlite', path: file });
    await store.close();
    // Enough rows for many leaf pages, none of which the service reads before a request asks.
    const db = new Database(file);
    const insert = db.prepare<[number, string]>(
      'INSERT INTO todos (id, title, done) VALUES (?, ?, 0)',
    );
    db.transaction(() => {
      for (let id = 2; id <= 3000; id++)
        insert.run(id, JSON.stringify(`item ${id} `.padEnd(200, '.')));
    })();
    leaves = db
      .prepare<[], { pageno: number }>(
        "SELECT pageno FROM dbstat WHERE name = 'todos' AND pagetype = 'leaf'",
      )
      .all()
      .map((row) => row.pageno);
    pageSize = db.pragma('page_size', { simple: true }) as number;
    db.close();
    assert.ok(leaves.length > 10, `${leaves.length} leaf pages`);
  });
  after(async () => {
    await Promise.all(services.map((service) => service.kill()));
    rmSync(dir, { recursive: true, force: true });
  });

  function damageLeaves(): void {
    const fd = openSync(file, 'r+');
    try {
      for (const page of leaves)
        writeSync(fd, Buffer.alloc(pageSize, 0xff), 0, pageSize, (page - 1) * pageSize);
    } finally {
      closeSync(fd);
    }
  }

  test('found at run time: 500 in the active format, "database is corrupt" in the log, not ready, the process lives', async () => {
    const plain = await startServiceProcess(['todo', '--db', `sqlite:${file}`]);
    const unified = await startServiceProcess([
      'todo',
      '--db',
      `sqlite:${file}`,
      '--errors',
      'unified',
      '--catch-all',
    ]);
    services.push(plain, unified);
    assert.equal((await get(plain.urls[0] as string, '/readyz')).status, 200, 'intact at start');
    damageLeaves();

    for (let round = 0; round < 3; round++) {
      const answer = await get(plain.urls[0] as string, '/todos/1500');
      assert.equal(answer.status, 500);
      assert.equal(answer.headers['content-type'], 'text/plain; charset=utf-8');
      assert.equal(answer.text, 'Internal Server Error');
      const enveloped = await get(unified.urls[0] as string, '/todos/1500');
      assert.equal(enveloped.status, 500);
      assert.equal(enveloped.headers['content-type'], 'application/json');
      assert.deepEqual(json(enveloped), {
        error: { code: 'INTERNAL', message: 'Something went wrong on our side' },
      });
      await stillAlive(plain);
      await stillAlive(unified);
    }
    assertUnavailable(await get(plain.urls[0] as string, '/readyz'), DEFAULT_503, '/readyz');
    assertUnavailable(await get(unified.urls[0] as string, '/readyz'), UNIFIED_503, '/readyz');
    for (const service of [plain, unified]) {
      await service.logged(
        'database is corrupt: answering 500 and not ready; restore it from a backup',
      );
      assert.equal(
        lines(service.output(), /"level":50,.*"msg":"database is corrupt/),
        1,
        service.output(),
      );
      assert.doesNotMatch(service.output(), /Uncaught|uncaughtException/);
    }
  });

  test('found at start: the process stops with exit code 1 and says the database is corrupt', async () => {
    damageLeaves();
    const child = runCli(['todo', '--port', '0', '--db', `sqlite:${file}`]);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    assert.equal(code, 1);
    assert.match(stderr, /^error: the database is corrupt: /m);
  });

  test('a file that is no database at all stops the start the same way', async () => {
    const fd = openSync(file, 'r+');
    writeSync(fd, Buffer.from('this is not SQLite'), 0, 18, 0);
    closeSync(fd);
    const child = runCli(['todo', '--port', '0', '--db', `sqlite:${file}`]);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    assert.equal(await new Promise<number | null>((resolve) => child.once('exit', resolve)), 1);
    assert.match(stderr, /^error: the database is corrupt: /m);
  });
});

const tmpfs = await tmpfsSkip();

describe('the disk under a SQLite file fills up', { skip: tmpfs }, () => {
  let disk: Tmpfs;
  let bank: ServiceProcess;
  const url = (): string => bank.urls[0] as string;
  const INITIAL = 1_000_000;

  before(async () => {
    disk = await mountTmpfs(2 * 1024 * 1024);
    bank = await startServiceProcess([
      'bank',
      '--db',
      `sqlite:${join(disk.path, 'bank.sqlite')}`,
      '--errors',
      'unified',
      '--accounts',
      `alice=${INITIAL}`,
    ]);
  });
  after(async () => {
    await bank?.kill();
    await disk?.unmount();
  });

  test('writes answer 503 with Retry-After, reads go on, one warning, not ready; ready and writing again once there is room', async () => {
    let acknowledged = 0;
    const withdraw = async (): Promise<RawResponse> => {
      const answer = await send(url(), { method: 'POST', path: '/withdraw/alice/1' });
      if (answer.status === 200) acknowledged += 1;
      return answer;
    };
    assert.equal((await withdraw()).status, 200);

    const filler = join(disk.path, 'filler');
    const fd = openSync(filler, 'w');
    try {
      for (;;) writeSync(fd, Buffer.alloc(4096, 1));
    } catch (error) {
      assert.equal((error as { code?: unknown }).code, 'ENOSPC');
    } finally {
      closeSync(fd);
    }

    for (let i = 0; i < 20; i++) {
      const answer = await withdraw();
      assertUnavailable(answer, UNIFIED_503, `withdrawal ${i} on a full disk`);
    }
    assert.deepEqual(json(await get(url(), '/accounts/alice')), {
      account: 'alice',
      balance: INITIAL - acknowledged,
    });
    assertUnavailable(await get(url(), '/readyz'), UNIFIED_503, '/readyz on a full disk');
    await bank.logged(
      'database refuses writes (full): writes answer 503 and not ready until one succeeds',
    );
    assert.equal(lines(bank.output(), /database refuses writes \(full\)/), 1, bank.output());
    assert.doesNotMatch(bank.output(), /unhandled failure|"stack"/);

    unlinkSync(filler);
    await waitUntilReady(url());
    assert.equal((await withdraw()).status, 200);
    await bank.logged('database takes writes again');
    await bank.kill();

    // What is on disk: every acknowledged withdrawal, none of the refused ones, and a sound file.
    const db = new Database(join(disk.path, 'bank.sqlite'), { readonly: true });
    try {
      assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
      assert.deepEqual(db.prepare('SELECT balance FROM accounts WHERE name = ?').get('alice'), {
        balance: INITIAL - acknowledged,
      });
    } finally {
      db.close();
    }
  });
});

describe('a read-only SQLite file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sqlite-readonly-'));
  const file = join(dir, 'bank.sqlite');
  const root = process.getuid?.() === 0;
  // Root writes through any file mode: the service then runs as nobody, who may create the -wal
  // and -shm files beside it but not write the database itself. Nobody may not be able to reach
  // this build (a clone inside a folder of mode 0700), so it runs a copy that it can reach.
  let copy: ReachableCopy | undefined;
  let bank: ServiceProcess;
  const url = (): string => bank.urls[0] as string;

  before(async () => {
    const ledger = await openLedger({ kind: 'sqlite', path: file }, new Map([['alice', 100]]));
    await ledger.close();
    chmodSync(dir, 0o777);
    chmodSync(file, root ? 0o644 : 0o444);
    if (root) copy = reachableCopy();
    bank = await startServiceProcess(
      ['bank', '--db', `sqlite:${file}`],
      1,
      copy === undefined ? {} : { uid: NOBODY, gid: NOBODY, cli: copy.cli },
    );
  });
  after(async () => {
    await bank?.kill();
    copy?.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the service runs as a user who may not write the database file', () => {
    const status = readFileSync(`/proc/${bank.pid}/status`, 'utf8');
    const uid = Number(/^Uid:\s+\d+\s+(\d+)/m.exec(status)?.[1]);
    assert.equal(uid, root ? NOBODY : process.getuid?.());
    const mode = statSync(file).mode;
    assert.equal(mode & (root ? 0o022 : 0o222), 0, `mode ${mode.toString(8)}`);
    if (root) assert.notEqual(statSync(file).uid, NOBODY);
  });

  test('reads work; writes answer 503 with Retry-After, one warning and no stack; not ready; nothing changes', async () => {
    assert.deepEqual(json(await get(url(), '/accounts/alice')), { account: 'alice', balance: 100 });
    for (let i = 0; i < 10; i++) {
      assertUnavailable(
        await send(url(), { method: 'POST', path: '/withdraw/alice/1' }),
        DEFAULT_503,
        `withdrawal ${i}`,
      );
    }
    assertUnavailable(await get(url(), '/readyz'), DEFAULT_503, '/readyz');
    assert.deepEqual(json(await get(url(), '/accounts/alice')), { account: 'alice', balance: 100 });
    await bank.logged(
      'database refuses writes (read-only): writes answer 503 and not ready until one succeeds',
    );
    assert.equal(lines(bank.output(), /database refuses writes \(read-only\)/), 1, bank.output());
    assert.doesNotMatch(bank.output(), /unhandled failure|"stack"/);
  });
});

describe('another process holds the SQLite write lock', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sqlite-busy-'));
  const file = join(dir, 'bank.sqlite');
  let bank: ServiceProcess;
  const url = (): string => bank.urls[0] as string;

  before(async () => {
    bank = await startServiceProcess([
      'bank',
      '--db',
      `sqlite:${file}`,
      '--errors',
      'unified',
      '--accounts',
      'alice=100',
    ]);
  });
  after(async () => {
    await bank?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a withdrawal that waits past the busy timeout answers 503 with Retry-After, and nothing is taken', async () => {
    // This test process is the other process: it takes the write lock and keeps it.
    const other = new Database(file);
    try {
      other.exec('BEGIN IMMEDIATE');
      assertUnavailable(
        await send(url(), { method: 'POST', path: '/withdraw/alice/1' }),
        UNIFIED_503,
        'the withdrawal behind the lock',
      );
      other.exec('ROLLBACK');
    } finally {
      other.close();
    }
    assert.deepEqual(json(await get(url(), '/accounts/alice')), { account: 'alice', balance: 100 });
    assert.equal((await send(url(), { method: 'POST', path: '/withdraw/alice/1' })).status, 200);
    await bank.logged('database busy: an operation waited too long for a lock');
    assert.doesNotMatch(bank.output(), /unhandled failure|"stack"/);
  });
});
