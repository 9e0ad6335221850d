// Each results file names the build it measured: the commit, and whether code differed from it
// (documents and earlier results do not count: they change nothing measured).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { describeBuild, describeBuildText } from '../../bench/build.js';

describe('the build a run measured', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-build-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const root = pathToFileURL(`${dir}/`);
  const git = (...args: string[]): string =>
    execFileSync(
      'git',
      ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args],
      { cwd: dir, encoding: 'utf8' },
    ).trim();

  test('outside a git checkout it is unknown, and the report says so', () => {
    assert.equal(describeBuild(root), undefined);
    assert.equal(describeBuildText(undefined), 'build unknown (git could not tell)');
  });

  test('a clean checkout gives its commit; a changed or new code file marks it modified, a changed document or result does not', () => {
    git('init', '-q');
    mkdirSync(join(dir, 'bench/results'), { recursive: true });
    mkdirSync(join(dir, 'docs'));
    writeFileSync(join(dir, 'app.ts'), 'export const a = 1;\n');
    writeFileSync(join(dir, 'README.md'), '# r\n');
    writeFileSync(join(dir, 'docs/guide.md'), '# g\n');
    writeFileSync(join(dir, 'bench/results/latest.md'), 'x\n');
    writeFileSync(join(dir, 'bench/results/run.json'), '{}\n');
    git('add', '.');
    git('commit', '-q', '-m', 'first');
    const commit = git('rev-parse', '--short=12', 'HEAD');
    assert.deepEqual(describeBuild(root), { commit, modified: false });

    writeFileSync(join(dir, 'README.md'), '# r, edited\n');
    writeFileSync(join(dir, 'docs/guide.md'), '# g, edited\n');
    writeFileSync(join(dir, 'docs/new.md'), '# n\n');
    writeFileSync(join(dir, 'bench/results/latest.md'), 'y\n');
    writeFileSync(join(dir, 'bench/results/run.json'), '{"a":1}\n');
    writeFileSync(join(dir, 'bench/results/next-run.json'), '{}\n');
    assert.deepEqual(describeBuild(root), { commit, modified: false });

    writeFileSync(join(dir, 'new.ts'), 'export const b = 1;\n');
    assert.deepEqual(describeBuild(root), { commit, modified: true }, 'a new code file');
    rmSync(join(dir, 'new.ts'));
    writeFileSync(join(dir, 'app.ts'), 'export const a = 2;\n');
    assert.deepEqual(describeBuild(root), { commit, modified: true }, 'a changed code file');
    git('add', 'app.ts');
    assert.deepEqual(
      describeBuild(root),
      { commit, modified: true },
      'a change staged, not committed',
    );
    assert.equal(
      describeBuildText({ commit, modified: true }),
      `build ${commit} with uncommitted changes`,
    );
  });
});
