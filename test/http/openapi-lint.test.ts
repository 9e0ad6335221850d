// Each mode's /openapi.json passes a well-known OpenAPI linter, Redocly CLI with its recommended
// rules (redocly.yaml), with zero errors. The linter runs from the installed package with its
// telemetry and update check off: nothing leaves the machine.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CLIENT_MODES } from '../client/generate.js';
import { get } from '../support/http.js';
import { startTestServer } from '../support/server.js';

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

test("every mode's OpenAPI document passes Redocly's recommended rules with zero errors", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
  try {
    const files: string[] = [];
    for (const [mode, options] of Object.entries(CLIENT_MODES)) {
      const server = await startTestServer(options);
      try {
        const file = join(dir, `${mode}.json`);
        writeFileSync(file, (await get(server.url, '/openapi.json')).body);
        files.push(file);
      } finally {
        await server.close();
      }
    }
    const { code, output } = await lint(files);
    assert.equal(code, 0, output);
    assert.doesNotMatch(output, /\berror\b.*\S/, output);
    assert.match(output, /Your API descriptions are valid/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
