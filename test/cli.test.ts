// The command line as a user meets it: bad options, --help, start, a store that survives a
// restart, and a clean exit on SIGTERM.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { get, json, postJson, send } from './support/http.js';

const CLI = fileURLToPath(new URL('../src/cli.js', import.meta.url));

interface Finished {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

async function run(args: readonly string[]): Promise<Finished> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

interface Started {
  readonly child: ChildProcess;
  readonly urls: string[];
  exited(): Promise<number | null>;
}

/** Starts the CLI and waits until every service it starts says where it listens. */
async function start(args: readonly string[], services = 1): Promise<Started> {
  const child = spawn(process.execPath, [CLI, ...args, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exit = once(child, 'exit').then(([code]) => code as number | null);
  const urls: string[] = [];
  let buffered = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      for (const match of buffered.matchAll(/"message":"listening".*?"url":"([^"]+)"/g)) {
        if (!urls.includes(match[1] as string)) urls.push(match[1] as string);
      }
      if (urls.length === services) resolve();
    });
    exit.then((code) => reject(new Error(`exited with ${code} before listening`)), reject);
  });
  return { child, urls, exited: () => exit };
}

describe('command line', () => {
  test('an unknown option is one line on stderr and exit code 2', async () => {
    const result = await run(['--bogus']);
    assert.equal(result.code, 2);
    assert.equal(result.stderr.trim().split('\n').length, 1);
    assert.match(result.stderr, /unknown option --bogus/);
  });

  test('a bad value is one line on stderr and exit code 2', async () => {
    for (const args of [['--port', 'abc'], ['--errors', 'fancy'], ['--db', 'mysql://x'], ['--accounts', 'alice=-1'], ['nobank']]) {
      const result = await run(args);
      assert.equal(result.code, 2, args.join(' '));
      assert.equal(result.stderr.trim().split('\n').length, 1, args.join(' '));
    }
  });

  test('--help prints the usage and exits 0', async () => {
    const result = await run(['--help']);
    assert.equal(result.code, 0);
    assert.match(result.stdout, /Usage: node dist\/cli\.js \[all\|todo\|bank\]/);
  });

  test('"all" starts the to-do service and the bank', async () => {
    const started = await start(['all', '--db', 'memory', '--log-level', 'info'], 2);
    try {
      const [todo, bank] = started.urls as [string, string];
      assert.equal((await get(todo, '/todos/1')).status, 200);
      assert.equal((await get(bank, '/accounts/alice')).status, 200);
    } finally {
      started.child.kill('SIGTERM');
      await started.exited();
    }
  });

  test('SIGTERM stops the service with exit code 0', async () => {
    const started = await start(['todo', '--db', 'memory']);
    started.child.kill('SIGTERM');
    assert.equal(await started.exited(), 0);
  });

  test('the SQLite store survives a restart, and the initial data is written only into an empty database', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cli-test-'));
    const args = ['todo', '--db', `sqlite:${join(dir, 'todo.sqlite')}`];
    try {
      const first = await start(args);
      const url = first.urls[0] as string;
      assert.equal((await postJson(url, '/todos', '{"title":"kept"}')).status, 201);
      assert.equal((await send(url, { method: 'DELETE', path: '/todos/1' })).status, 204);
      first.child.kill('SIGTERM');
      assert.equal(await first.exited(), 0);

      const second = await start(args);
      const again = second.urls[0] as string;
      assert.deepEqual(json(await get(again, '/todos/2')), { id: 2, title: 'kept', done: false });
      assert.equal((await get(again, '/todos/1')).status, 404, 'the deleted initial item does not come back');
      second.child.kill('SIGTERM');
      assert.equal(await second.exited(), 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('--accounts sets the initial accounts of the bank', async () => {
    const started = await start(['bank', '--db', 'memory', '--accounts', 'carol=7,dave=0']);
    try {
      const url = started.urls[0] as string;
      assert.deepEqual(json(await get(url, '/accounts/carol')), { account: 'carol', balance: 7 });
      assert.equal((await get(url, '/accounts/alice')).status, 404);
    } finally {
      started.child.kill('SIGTERM');
      await started.exited();
    }
  });
});
