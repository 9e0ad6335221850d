// The compiled service and the packages it runs on, laid out again in a folder that any user can
// reach. A test run as root starts the service as another user (nobody) to meet file permissions,
// and that user may not be able to reach the repository itself: a clone under /root, or in a
// folder made by `mktemp -d`, has a parent of mode 0700. Files are hard links to the repository's
// own where the file system allows it (so the copy takes a fraction of a second), copies elsewhere.
import {
  chmodSync,
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder that `npm test` compiles into (.build/) and the repository above it. */
const BUILD = fileURLToPath(new URL('../..', import.meta.url));
const REPOSITORY = join(BUILD, '..');

export interface ReachableCopy {
  /** The copy's compiled CLI, to run instead of .build/src/cli.js. */
  readonly cli: string;
  remove(): void;
}

interface PackageLock {
  readonly packages: Record<string, { readonly dev?: boolean }>;
}

/**
 * The top-level folders under node_modules that a production install has (`npm ci --omit=dev`):
 * every package the lock file does not mark as for development only. A nested package comes with
 * the folder of the package it is nested in.
 */
function productionPackages(lock: PackageLock): string[] {
  return Object.entries(lock.packages)
    .filter(
      ([path, entry]) =>
        path.startsWith('node_modules/') &&
        !path.includes('/node_modules/', 1) &&
        entry.dev !== true,
    )
    .map(([path]) => path);
}

/** A copy of .build/src, package.json and the production packages, in a new folder of mode 0755 under the system's temporary folder. */
export function reachableCopy(): ReachableCopy {
  const root = mkdtempSync(join(tmpdir(), 'service-copy-'));
  chmodSync(root, 0o755);
  try {
    const lock = JSON.parse(
      readFileSync(join(REPOSITORY, 'package-lock.json'), 'utf8'),
    ) as PackageLock;
    // package.json says "type": "module", which makes the compiled .js files ES modules.
    const parts = ['package.json', join('.build', 'src'), ...productionPackages(lock)];
    for (const part of parts) mirror(join(REPOSITORY, part), join(root, part));
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
  return {
    cli: join(root, '.build', 'src', 'cli.js'),
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** Lays `from` (a file or a folder) out again at `to`; every folder made is 0755 whatever the umask. */
function mirror(from: string, to: string): void {
  if (!statSync(from).isDirectory()) {
    makeFolder(dirname(to));
    link(from, to);
    return;
  }
  makeFolder(to);
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory()) mirror(source, target);
    else if (entry.isSymbolicLink()) symlinkSync(readlinkSync(source), target);
    else link(source, target);
  }
}

function makeFolder(path: string): void {
  if (existsSync(path)) return;
  makeFolder(dirname(path));
  mkdirSync(path);
  chmodSync(path, 0o755);
}

function link(from: string, to: string): void {
  try {
    linkSync(from, to);
  } catch {
    // Another file system (EXDEV), or hard links refused (protected_hardlinks): a plain copy.
    copyFileSync(from, to);
  }
}
