// The layers, checked on the import graph of the sources: storage (src/db) knows nothing of HTTP or
// of the services, and the HTTP contract layer (src/http) nothing of storage or of the services.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SRC = join(ROOT, 'src');

/** Every relative import of a source file, as a path under src/ (`db/sqlite.ts`). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [
    ...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s*['"]([^'"]+)['"]/g),
    ...text.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((match) => match[1] as string);
  return specifiers
    .filter((s) => s.startsWith('.'))
    .map((s) => relative(SRC, resolve(dirname(file), s)).replace(/\.js$/, '.ts'));
}

function sourcesUnder(folder: string): string[] {
  return readdirSync(join(SRC, folder), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => join(SRC, folder, name));
}

function crossings(folder: string, forbidden: readonly string[]): string[] {
  const found: string[] = [];
  for (const file of sourcesUnder(folder)) {
    for (const target of importsOf(file)) {
      if (forbidden.some((layer) => target.startsWith(`${layer}/`)))
        found.push(`${relative(SRC, file)} imports ${target}`);
    }
  }
  return found;
}

test('the import reader sees the imports it is meant to police', () => {
  // A reader that found nothing would let every check below pass; src/server.ts imports both
  // layers.
  const server = importsOf(join(SRC, 'server.ts'));
  assert.ok(server.includes('http/app.ts'), server.join(', '));
  assert.ok(importsOf(join(SRC, 'db', 'sqlite', 'store.ts')).includes('db/sqlite/group-commit.ts'));
});

test('storage (src/db) imports nothing from the HTTP layer or the services', () => {
  assert.deepEqual(crossings('db', ['http', 'todo', 'bank']), []);
});

test('the HTTP contract layer (src/http) imports nothing from storage or the services', () => {
  assert.deepEqual(crossings('http', ['db', 'todo', 'bank']), []);
});

test("a service's storage (every file but its routes, model and service) imports nothing from the HTTP layer", () => {
  const wire = new Set(['routes.ts', 'model.ts', 'service.ts']);
  const found = ['todo', 'bank'].flatMap((folder) =>
    crossings(folder, ['http']).filter(
      (crossing) => !wire.has(crossing.split(' ')[0]?.split('/').at(-1) ?? ''),
    ),
  );
  assert.deepEqual(found, []);
});

test('the words storage and HTTP share (src/common/keyed-writes.ts, src/common/eventually.ts, src/common/deadline.ts, src/common/work.ts) import neither, only one another', () => {
  for (const file of ['keyed-writes.ts', 'eventually.ts', 'deadline.ts', 'work.ts'])
    assert.deepEqual(
      importsOf(join(SRC, 'common', file)).filter((imported) => !imported.startsWith('common/')),
      [],
      file,
    );
});

test('the rate limits (src/rate-limits), which both layers use, import neither, nor the services', () => {
  assert.deepEqual(crossings('rate-limits', ['http', 'db', 'todo', 'bank']), []);
  assert.ok(
    importsOf(join(SRC, 'db', 'postgres', 'rate-limits.ts')).includes('rate-limits/decision.ts'),
    'the reader sees the shared limiter use them',
  );
});

test('the HTTP contract layer (src/http) names no feature: the features (src/features) plug into it', () => {
  assert.deepEqual(crossings('http', ['features']), []);
  assert.ok(
    importsOf(join(SRC, 'features', 'cors', 'stage.ts')).includes('http/stages/stage.ts'),
    'the reader sees a feature use the layer',
  );
});

test('the migration kit (src/migration) stands apart: it imports nothing else of src/', () => {
  const found = sourcesUnder('migration').flatMap((file) =>
    importsOf(file)
      .filter((target) => !target.startsWith('migration/'))
      .map((target) => `${relative(SRC, file)} imports ${target}`),
  );
  assert.deepEqual(found, []);
});
