// Which build a run measured: the commit checked out, and whether the files differed from it (a
// change, or a new file git does not ignore, which the build would compile too), so that a results
// file can be traced to the code it measured. Documents are left out of the comparison (they change
// nothing measured), and so is the results folder, which every run writes into.
import { execFileSync } from 'node:child_process';

export interface Build {
  readonly commit: string;
  /** Files other than documents and results differed from the commit when the run started. */
  readonly modified: boolean;
}

/** The build in `root`, a git checkout; undefined where git cannot tell (no git, not a checkout, a checkout git refuses to read). */
export function describeBuild(root: URL): Build | undefined {
  const git = (...args: string[]): string =>
    execFileSync('git', args, {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  try {
    const commit = git('rev-parse', '--short=12', 'HEAD');
    const changes = git(
      'status',
      '--porcelain',
      '--untracked-files=all',
      '--',
      '.',
      ':(exclude)bench/results',
      ':(exclude,glob)**/*.md',
    );
    return { commit, modified: changes !== '' };
  } catch {
    return undefined;
  }
}

export function describeBuildText(build: Build | undefined): string {
  if (build === undefined) return 'build unknown (git could not tell)';
  return `build ${build.commit}${build.modified ? ' with uncommitted changes' : ''}`;
}
