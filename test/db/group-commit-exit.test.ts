// The writer thread of a SQLite file store keeps its process alive exactly while writes are out
// (src/db/sqlite/group-commit.ts): a process that only waits for its writes gets every answer, and one
// whose writes are all answered may end without closing the store.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, test } from 'node:test';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

const CHILD = new URL('../support/idle-writer-child.js', import.meta.url);
/** Far more than the child needs; reached only when the writer holds the process after its work. */
const EXIT_WAIT_MS = 20_000;

const dir = mkdtempSync(join(tmpdir(), 'group-commit-exit-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function runChild(
  name: string,
  turns: string,
): Promise<{ code: number | null; out: string; exitedAlone: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [fileURLToPath(CHILD), join(dir, `${name}.sqlite`), turns],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), EXIT_WAIT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    // 'close', not 'exit': only then has all of the child's output been read.
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, out, exitedAlone: signal === null });
    });
  });
}

describe('the writer thread and the life of its process', { timeout: SUITE_TIMEOUT_MS }, () => {
  test('a process that only waits for its writes gets every answer, the last batch too when the one before is answered first', async () => {
    const { code, out, exitedAlone } = await runChild('two-batches', '2000,2000');
    assert.equal(
      out,
      '4000 written\n',
      'exit code 13 is a top-level await left unsettled: the process ended with a batch out',
    );
    assert.ok(exitedAlone, `the idle writer held the process for ${EXIT_WAIT_MS} ms`);
    assert.equal(code, 0);
  });

  test('a process with one write answered ends by itself without closing the store', async () => {
    const { code, out, exitedAlone } = await runChild('one', '1');
    assert.equal(out, '1 written\n');
    assert.ok(exitedAlone, `the idle writer held the process for ${EXIT_WAIT_MS} ms`);
    assert.equal(code, 0);
  });
});
