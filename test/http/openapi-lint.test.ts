// Each mode's /openapi.json, every option on included, is accepted by two OpenAPI tools written
// apart from each other and from us, with zero errors: Redocly CLI with its recommended rules
// (redocly.yaml), and Stoplight Spectral with its OpenAPI ruleset (`spectral:oas`: the
// specification's schema, and rules a schema cannot say, such as every path parameter declared on
// every operation). Both run from the installed packages with telemetry and update checks off:
// nothing leaves the machine. Spectral's warnings are style the contract decides otherwise (no
// `servers`, no tags, no contact) and are not counted.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import spectralCore from '@stoplight/spectral-core';
import spectralParsers from '@stoplight/spectral-parsers';
import { oas } from '@stoplight/spectral-rulesets';
import { CLIENT_MODES } from '../client/generate.js';
import { EVERY_OPTION_MODES } from '../support/every-option.js';
import { get } from '../support/http.js';
import { startTestServer, type TestServerOptions } from '../support/server.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

function lint(files: readonly string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      join(ROOT, 'node_modules/.bin/redocly'),
      ['lint', '--config', join(ROOT, 'redocly.yaml'), '--format', 'stylish', ...files],
      {
        env: {
          ...process.env,
          REDOCLY_TELEMETRY: 'off',
          REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
          CI: 'true',
        },
        timeout: 120_000,
      },
      (error, stdout, stderr) =>
        resolve({
          code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1,
          output: stdout + stderr,
        }),
    );
  });
}

const MODES = { ...CLIENT_MODES, ...EVERY_OPTION_MODES };

/** Spectral's DiagnosticSeverity.Error (@stoplight/types, which spectral-core's types name). */
const SPECTRAL_ERROR: spectralCore.ISpectralDiagnostic['severity'] = 0;

/** Spectral's errors (not its warnings) on a document, one line each. */
async function spectralErrors(text: string): Promise<string[]> {
  const spectral = new spectralCore.Spectral();
  spectral.setRuleset(oas as spectralCore.RulesetDefinition);
  const results = await spectral.run(
    new spectralCore.Document(text, spectralParsers.Json, 'openapi.json'),
  );
  return results
    .filter((result) => result.severity === SPECTRAL_ERROR)
    .map((result) => `${result.code} at ${result.path.join('.')}: ${result.message}`);
}

/** Each mode's document, as its server publishes it, in a file of the folder. */
async function publishedDocuments(dir: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const [mode, options] of Object.entries(MODES)) {
    const server = await startTestServer(options);
    try {
      const file = join(dir, `${mode}.json`);
      const res = await get(server.url, '/openapi.json');
      assert.equal(res.status, 200, mode);
      writeFileSync(file, res.body);
      files.set(mode, file);
    } finally {
      await server.close();
    }
  }
  return files;
}

test("every mode's OpenAPI document, every option on included, passes Redocly's recommended rules and Spectral's OpenAPI rules with zero errors", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
  try {
    const documents = await publishedDocuments(dir);
    for (const [mode, file] of documents)
      assert.deepEqual(await spectralErrors(readFileSync(file, 'utf8')), [], mode);
    const { code, output } = await lint([...documents.values()]);
    assert.equal(code, 0, output);
    assert.doesNotMatch(output, /\berror\b.*\S/, output);
    assert.match(output, /Your API descriptions are valid/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('Spectral finds what it is trusted to find: a preflight that does not declare its path parameter', async () => {
  const server = await startTestServer(
    EVERY_OPTION_MODES['todo-default-every-option'] as TestServerOptions,
  );
  let text: string;
  try {
    text = (await get(server.url, '/openapi.json')).text;
  } finally {
    await server.close();
  }
  const document = JSON.parse(text) as {
    paths: Record<string, Record<string, { parameters: { in?: string }[] }>>;
  };
  const preflight = document.paths['/todos/{todo_id}']?.options;
  assert.ok(preflight !== undefined);
  preflight.parameters = preflight.parameters.filter((parameter) => parameter.in !== 'path');
  assert.deepEqual(await spectralErrors(JSON.stringify(document)), [
    'path-params at paths./todos/{todo_id}.options: Operation must define parameter "{todo_id}" as expected by path "/todos/{todo_id}".',
  ]);
});
