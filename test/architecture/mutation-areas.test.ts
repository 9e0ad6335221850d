// The areas of mutation testing (scripts/mutation-areas.mjs) cover the scope of issue 11: every
// file of src/http, src/db, the to-do stores and the bank ledgers is mutated by exactly one area,
// so that running every area measures the whole scope once, and a new file cannot slip out of it.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

interface Area {
  readonly mutate: readonly string[];
  readonly tests: readonly string[];
}

interface AreasModule {
  readonly scope: readonly string[];
  readonly areas: Readonly<Record<string, Area>>;
}

const strings = (value: unknown): value is readonly string[] =>
  Array.isArray(value) && value.every((item) => typeof item === 'string');

async function loadAreas(): Promise<AreasModule> {
  const loaded: unknown = await import(
    pathToFileURL(join(ROOT, 'scripts', 'mutation-areas.mjs')).href
  );
  const { scope, areas } = loaded as { scope: unknown; areas: unknown };
  assert.ok(strings(scope), 'scope: a list of globs');
  assert.ok(typeof areas === 'object' && areas !== null, 'areas: an object');
  for (const [name, area] of Object.entries(areas)) {
    const { mutate, tests } = area as { mutate: unknown; tests: unknown };
    assert.ok(strings(mutate) && strings(tests), `area ${name}: mutate and tests, lists of globs`);
  }
  return { scope, areas: areas as Record<string, Area> };
}

/** The glob forms the areas use, as a regular expression: `*`, `{a,b}`, `!(a|b)`. */
function globPattern(glob: string): RegExp {
  let source = '';
  for (let i = 0; i < glob.length; i += 1) {
    const c = glob[i] as string;
    if (glob.startsWith('!(', i)) {
      const end = glob.indexOf(')', i);
      source += `(?!(?:${glob.slice(i + 2, end)})\\.)[^/]*`;
      i = end;
    } else if (c === '*') source += '[^/]*';
    else if (c === '{') source += '(?:';
    else if (c === '}') source += ')';
    else if (c === ',') source += '|';
    else source += c.replace(/[.+?^$()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

function filesUnder(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' }).map(
    (name) => `${folder}/${name.replaceAll('\\', '/')}`,
  );
}

const matching = (globs: readonly string[], files: readonly string[]): string[] =>
  files.filter((file) => globs.some((glob) => globPattern(glob).test(file)));

test('every file of the mutation scope is in exactly one area', async () => {
  const { scope, areas } = await loadAreas();
  const inScope = matching(scope, filesUnder('src'));
  assert.ok(
    inScope.includes('src/http/routing.ts') && inScope.includes('src/bank/ledger-postgres.ts'),
    'the scope is read',
  );
  const owners = new Map<string, string[]>(inScope.map((file) => [file, []]));
  for (const [name, area] of Object.entries(areas)) {
    for (const file of matching(area.mutate, filesUnder('src'))) {
      assert.ok(owners.has(file), `area ${name} mutates ${file}, outside the scope`);
      owners.get(file)?.push(name);
    }
  }
  const misplaced = [...owners]
    .filter(([, names]) => names.length !== 1)
    .map(([file, names]) => `${file}: ${names.length === 0 ? 'in no area' : names.join(', ')}`);
  assert.deepEqual(misplaced, []);
});

test('every test glob of every area names at least one test file', async () => {
  const { areas } = await loadAreas();
  const sources = filesUnder('test').map((file) => `.build/${file.replace(/\.ts$/, '.js')}`);
  for (const [name, area] of Object.entries(areas)) {
    for (const glob of area.tests)
      assert.notDeepEqual(
        matching([glob], sources),
        [],
        `area ${name}: ${glob} matches no test file`,
      );
  }
});
