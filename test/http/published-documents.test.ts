// The published documents change only on purpose: each mode's /openapi.json and the pages are what
// test/fixtures/published holds (`npm run docs:record` rewrites it after a deliberate change). A
// generated client is built from the document, so a description, a schema or a code that changes
// by accident is a change to every client's types; other tests check that the document is valid
// and describes every answer (openapi-lint, openapi-responses), this one that it stays as reviewed.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, test } from 'node:test';
import { get } from '../support/http.js';
import { withServer } from '../support/server.js';
import { fetchPublished, MODES, recordedDocument, recordedPage } from '../support/published.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

const HINT =
  'if the change is meant, run `npm run docs:record` and review the diff of test/fixtures/published';

/** Where two texts first differ, with some context, so that a failure says what changed. */
function firstDifference(actual: string, expected: string): string {
  let at = 0;
  while (at < actual.length && actual[at] === expected[at]) at++;
  const around = (text: string): string =>
    JSON.stringify(text.slice(Math.max(0, at - 80), at + 80));
  return `first difference at character ${at}:\n  served:   ${around(actual)}\n  recorded: ${around(expected)}`;
}

function assertSameText(actual: string, expected: string, what: string): void {
  if (actual !== expected)
    assert.fail(
      `${what} differs from its recorded copy; ${HINT}\n${firstDifference(actual, expected)}`,
    );
}

describe('the published documents are the reviewed ones', { timeout: SUITE_TIMEOUT_MS }, () => {
  for (const mode of MODES) {
    test(`${[`${mode.name}: /openapi.json`, ...mode.pages].join(', ')}, byte for byte`, async () => {
      const published = await fetchPublished(mode);
      assertSameText(published.openapi, recordedDocument(mode), `/openapi.json of ${mode.name}`);
      for (const page of mode.pages)
        assertSameText(
          published.pages.get(page) ?? '',
          recordedPage(mode, page),
          `${page} of ${mode.name}`,
        );
    });
  }
});

const require = createRequire(import.meta.url);
const installed = (file: string): Buffer => readFileSync(require.resolve(file));

describe(
  "the pages' scripts and styles are the installed packages' own files",
  { timeout: SUITE_TIMEOUT_MS },
  () => {
    const ASSETS: readonly [string, string, string][] = [
      [
        '/docs/swagger-ui-bundle.js',
        'swagger-ui-dist/swagger-ui-bundle.js',
        'text/javascript; charset=utf-8',
      ],
      ['/docs/swagger-ui.css', 'swagger-ui-dist/swagger-ui.css', 'text/css; charset=utf-8'],
      ['/docs/oauth2-redirect', 'swagger-ui-dist/oauth2-redirect.html', 'text/html; charset=utf-8'],
      [
        '/docs/oauth2-redirect.js',
        'swagger-ui-dist/oauth2-redirect.js',
        'text/javascript; charset=utf-8',
      ],
    ];

    test('each Swagger UI file is served as installed, with its media type, on every request', () =>
      withServer({ service: 'todo' }, async (url) => {
        for (const [path, file, contentType] of ASSETS) {
          for (const round of [1, 2]) {
            const res = await get(url, path);
            assert.equal(res.status, 200, `${path} (request ${round})`);
            assert.equal(res.headers['content-type'], contentType, path);
            assert.ok(
              res.body.equals(installed(file)),
              `${path} (request ${round}) is not ${file}`,
            );
          }
        }
      }));

    test("ReDoc's bundle is served as installed but for its logo, which is inline instead of on a CDN", () =>
      withServer({ service: 'bank' }, async (url) => {
        const res = await get(url, '/redoc/redoc.standalone.js');
        assert.equal(res.status, 200);
        assert.equal(res.headers['content-type'], 'text/javascript; charset=utf-8');
        const bundle = installed('redoc/bundles/redoc.standalone.js').toString('utf8');
        const logo = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
        assert.ok(
          bundle.includes(logo),
          'the installed ReDoc no longer names its CDN logo: the rewrite has nothing to do',
        );
        assert.doesNotMatch(res.text, /cdn\.redoc\.ly/);
        const inline = res.text.split(/data:image\/svg\+xml,[^"'`]*/);
        assert.deepEqual(
          inline,
          bundle.split(logo),
          'everything but the logo is the installed bundle',
        );
      }));
  },
);
