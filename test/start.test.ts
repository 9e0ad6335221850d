// `npm start` compiles only when the build is out of date: a fresh clone builds dist/ at its first
// start, a start with nothing changed writes nothing under dist/ (and so starts in about a second
// instead of a full compile's several), and a changed source file is compiled before the start
// that follows runs it. All in a copy of the project's sources, so that this repository's own
// dist/ is left as it is.
import assert from 'node:assert/strict';
import {
  cpSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test, type TestContext } from 'node:test';
import { startWithNpm } from './support/service-process.js';
import { PROCESS_SUITE_TIMEOUT_MS } from './support/time-limits.js';

const REPOSITORY = fileURLToPath(new URL('../..', import.meta.url));
/** What `npm start` needs of a clone, beside node_modules. */
const SOURCES = ['package.json', 'tsconfig.json', 'tsconfig.base.json', 'src'];
const VERSIONED = join('src', 'todo', 'service.ts');
const VERSION = /version: '([^']+)'/;

/**
 * Starts the to-do service with `npm start` in `folder`, stops it, and gives the version its
 * `listening` line says; the time from the command to that line goes to the test's diagnostics.
 */
async function startedVersion(folder: string, context: TestContext): Promise<string> {
  const begun = performance.now();
  const started = await startWithNpm(['todo', '--db', 'memory'], 1, folder);
  context.diagnostic(`listening ${Math.round(performance.now() - begun)} ms after npm start`);
  try {
    const listening = started
      .output()
      .split('\n')
      .find((line) => line.includes('"msg":"listening"'));
    const { version } = JSON.parse(listening ?? '{}') as { version?: unknown };
    assert.equal(typeof version, 'string', started.output());
    return version as string;
  } finally {
    await started.kill();
  }
}

/** Every file under dist/ with the time it was last written. */
function outputTimes(folder: string): Map<string, number> {
  const dist = join(folder, 'dist');
  const times = new Map<string, number>();
  for (const path of readdirSync(dist, { recursive: true, encoding: 'utf8' })) {
    const stats = statSync(join(dist, path));
    if (stats.isFile()) times.set(path, stats.mtimeMs);
  }
  return times;
}

describe(
  'npm start compiles only when the build is out of date',
  { timeout: PROCESS_SUITE_TIMEOUT_MS },
  () => {
    const folder = mkdtempSync(join(tmpdir(), 'npm-start-'));
    const source = join(folder, VERSIONED);
    let version = '';
    let built = new Map<string, number>();

    before(() => {
      for (const part of SOURCES)
        cpSync(join(REPOSITORY, part), join(folder, part), { recursive: true });
      symlinkSync(join(REPOSITORY, 'node_modules'), join(folder, 'node_modules'));
      version = VERSION.exec(readFileSync(source, 'utf8'))?.[1] ?? '';
      assert.notEqual(version, '', `${VERSIONED} names the service's version`);
    });
    after(() => rmSync(folder, { recursive: true, force: true }));

    test('the first start of a fresh clone builds dist/ and runs it', async (context) => {
      assert.equal(await startedVersion(folder, context), version);
      built = outputTimes(folder);
      assert.ok(
        built.has('cli.js') && built.has(join('todo', 'service.js')),
        [...built.keys()].join(', '),
      );
    });

    test('a start with nothing changed writes nothing under dist/', async (context) => {
      assert.equal(await startedVersion(folder, context), version);
      const now = outputTimes(folder);
      assert.deepEqual([...now.keys()].sort(), [...built.keys()].sort());
      assert.deepEqual(
        [...now].filter(([path, time]) => built.get(path) !== time).map(([path]) => path),
        [],
        'files written again',
      );
    });

    test('a start after a source file changed compiles it and runs the new code', async (context) => {
      writeFileSync(
        source,
        readFileSync(source, 'utf8').replace(VERSION, `version: '${version}-changed'`),
      );
      assert.equal(await startedVersion(folder, context), `${version}-changed`);
      const compiled = statSync(join(folder, 'dist', 'todo', 'service.js')).mtimeMs;
      assert.ok(
        compiled > (built.get(join('todo', 'service.js')) ?? Infinity),
        'dist/todo/service.js was written again',
      );
    });
  },
);
