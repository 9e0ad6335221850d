// A small tmpfs for tests that need a disk to fill up. Mounting needs root (or CAP_SYS_ADMIN):
// without it the suite is skipped with the reason, unless REQUIRE_TMPFS=1 (as in CI), where it
// fails instead.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface Tmpfs {
  readonly path: string;
  unmount(): Promise<void>;
}

export async function mountTmpfs(sizeBytes: number): Promise<Tmpfs> {
  const path = await mkdtemp(join(tmpdir(), 'tmpfs-'));
  try {
    await run('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes},mode=0755`, 'tmpfs', path]);
  } catch (error) {
    await rm(path, { recursive: true, force: true });
    throw error;
  }
  return {
    path,
    async unmount() {
      await run('umount', ['-l', path]);
      await rm(path, { recursive: true, force: true });
    },
  };
}

/** The `skip` option for suites that mount a tmpfs: false when mounting works, else why not. */
export async function tmpfsSkip(): Promise<string | false> {
  let problem: string | undefined;
  try {
    const probe = await mountTmpfs(64 * 1024);
    await probe.unmount();
  } catch (error) {
    problem = `cannot mount a tmpfs (needs root or CAP_SYS_ADMIN): ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`;
  }
  if (problem === undefined) return false;
  if (process.env.REQUIRE_TMPFS === '1') {
    test('a tmpfs can be mounted (REQUIRE_TMPFS=1)', () => {
      throw new Error(problem);
    });
  }
  return `${problem} (set REQUIRE_TMPFS=1 to fail instead of skipping)`;
}
