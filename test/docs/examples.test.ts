// Every shell example of the README and docs/ runs against real services started as its text says,
// and prints what its text shows: an example that drifts from the services fails the build. How
// examples are written and what the runner changes in them: test/support/doc-examples.ts.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import {
  documentFiles,
  DocSession,
  needsPostgres,
  normalise,
  npmScriptsNamed,
  parseDocument,
  postgresProblem,
  readDocument,
  REPOSITORY,
  serverBlockPorts,
  type Example,
} from '../support/doc-examples.js';
import { PROCESS_SUITE_TIMEOUT_MS } from '../support/time-limits.js';

const FILES = documentFiles();
const postgres = postgresProblem();

/** Runs one example in its document's session: skipped with the reason when it needs PostgreSQL and none is here. */
async function check(
  t: TestContext,
  session: DocSession,
  example: Example,
  skippedPorts: Set<number>,
): Promise<void> {
  const where = `${example.file}:${example.line}`;
  const missing = await postgres;
  // An example that asks services whose server block was skipped cannot run either.
  const usesSkipped =
    example.kind === 'run' &&
    [...example.script.matchAll(/\b80(0\d)\b/g)].some((match) =>
      skippedPorts.has(Number(match[0])),
    );
  if ((needsPostgres(example.script) && missing !== undefined) || usesSkipped) {
    if (process.env.REQUIRE_POSTGRES === '1')
      assert.fail(`${where} needs PostgreSQL (REQUIRE_POSTGRES=1): ${missing}`);
    t.skip(
      `${where} needs PostgreSQL: ${missing} (set REQUIRE_POSTGRES=1 to fail instead of skipping)`,
    );
    if (example.kind === 'server')
      for (const port of serverBlockPorts(example.script)) skippedPorts.add(port);
    return;
  }
  switch (example.kind) {
    case 'suite':
      return;
    case 'server':
      for (const port of serverBlockPorts(example.script)) skippedPorts.delete(port);
      await session.start(example);
      return;
    case 'run': {
      const result = await session.run(example);
      assert.equal(result.code, 0, `${where} exited with ${result.code}:\n${result.output}`);
      assert.equal(
        normalise(result.output),
        normalise(example.expected ?? ''),
        `${where} printed something else than its text shows`,
      );
    }
  }
}

describe('the examples of the README and docs/', { timeout: PROCESS_SUITE_TIMEOUT_MS }, () => {
  test('every shell block is an example the runner knows how to run', () => {
    const problems = FILES.flatMap((file) => readDocument(file).problems);
    assert.deepEqual(problems, []);
    assert.ok(
      readDocument('README.md').examples.some((example) => example.kind === 'server'),
      'the README starts the services',
    );
  });

  test('every npm script the README and docs/ name exists', () => {
    const { scripts } = JSON.parse(readFileSync(join(REPOSITORY, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    const named = FILES.flatMap((file) =>
      npmScriptsNamed(readFileSync(join(REPOSITORY, file), 'utf8')).map(
        (name) => [file, name] as const,
      ),
    );
    assert.deepEqual(
      named.filter(([, name]) => !(name in scripts)),
      [],
    );
  });

  test('the comparison masks request ids, dates, times, process ids, host names and durations, and nothing else', () => {
    const headers = (id: string, date: string, status: string): string =>
      `HTTP/1.1 ${status}\r\nX-Request-Id: ${id}\r\nDate: ${date}\r\n\r\n{"detail":"Todo not found"}`;
    const a = headers(
      'bb56b715-e23d-4c27-9cf3-eceebf902ba1',
      'Wed, 25 Nov 2026 15:31:13 GMT',
      '404 Not Found',
    );
    const b = headers(
      '76bf02ab-ab6e-421d-b133-92b51b481f58',
      'Thu, 26 Nov 2026 01:02:03 GMT',
      '404 Not Found',
    );
    assert.equal(normalise(a), normalise(`${b}\n\n`));
    assert.notEqual(
      normalise(a),
      normalise(
        headers('76bf02ab-ab6e-421d-b133-92b51b481f58', 'Thu, 26 Nov 2026 01:02:03 GMT', '200 OK'),
      ),
    );
    assert.notEqual(normalise(a), normalise(a.replace('not found', 'Not Found')));
    // A request id a client chose is kept, and compared.
    assert.notEqual(normalise('X-Request-Id: abc-123'), normalise('X-Request-Id: abc-124'));
    const line = (time: number, pid: number, host: string, ms: number, id: string): string =>
      `{"level":30,"time":${time},"pid":${pid},"hostname":"${host}","requestId":"${id}","status":200,"durationMs":${ms},"bytes":40,"msg":"request"}`;
    assert.equal(
      normalise(line(1795620672643, 17835, 'vm', 0.412, 'bb56b715-e23d-4c27-9cf3-eceebf902ba1')),
      normalise(line(1795620673605, 4, 'ci', 12, 'f7947089-d252-4087-96b1-db78936de3d2')),
    );
    assert.notEqual(
      normalise(line(1, 1, 'vm', 1, 'abc-123')),
      normalise(line(1, 1, 'vm', 1, 'abc-124')),
    );
  });

  test('an expected output belongs to the plain example right before it, and shells other than sh are refused', () => {
    const doc =
      '```sh\ncurl -s localhost:8000/todos/1\n```\n\n```text\n{"id":1}\n```\n\n```sh server\nnpm start\n```\n\n```text\nlisten\n```\n\n```bash\nls\n```\n';
    const parsed = parseDocument('x.md', doc);
    assert.equal(parsed.examples[0]?.expected, '{"id":1}');
    assert.equal(parsed.examples[0]?.kind, 'run');
    assert.equal(parsed.examples[1]?.kind, 'server');
    assert.deepEqual(parsed.problems, [
      'x.md:9: only a plain ```sh example has an expected output',
      'x.md:17: a shell example is written ```sh, not ```bash',
    ]);
  });

  for (const file of FILES) {
    const { examples } = readDocument(file);
    if (examples.length === 0) continue;
    test(`${file}: every shell example prints what its text shows`, async (t) => {
      const session = await DocSession.open();
      const skippedPorts = new Set<number>();
      try {
        for (const example of examples) {
          await t.test(`line ${example.line} (${example.kind})`, (t) =>
            check(t, session, example, skippedPorts),
          );
        }
      } finally {
        await session.close();
      }
    });
  }
});
