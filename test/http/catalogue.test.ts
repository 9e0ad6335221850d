// The error catalogue is the one list of what the services can answer: the table of docs/errors.md
// must say exactly what it holds, and every problem type it names must be explained where its URI
// points.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { catalogueEntries, PROBLEM_TYPE_BASE, problemType } from '../../src/http/catalogue.js';
import { DEFAULT_IDEMPOTENCY_TTL_MS } from '../../src/features/idempotency/gate.js';
import { get } from '../support/http.js';
import { withServer } from '../support/server.js';
import { SUITE_TIMEOUT_MS } from '../support/time-limits.js';

const ERRORS_GUIDE = new URL('../../../docs/errors.md', import.meta.url);

/** The rows of the "Error catalogue" table of docs/errors.md, cells without their backticks. */
function guideRows(): string[][] {
  const text = readFileSync(ERRORS_GUIDE, 'utf8');
  const start = text.indexOf('\n## Error catalogue\n');
  assert.ok(start >= 0, 'docs/errors.md has an "Error catalogue" section');
  const section = text.slice(start, text.indexOf('\n#', start + 1));
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) =>
      line
        .slice(1, -1)
        .split(' | ')
        .map((cell) => cell.trim().replace(/^`(.*)`$/, '$1')),
    );
}

describe('error catalogue', { timeout: SUITE_TIMEOUT_MS }, () => {
  test("docs/errors.md's error catalogue lists every entry with its status, problem type, title and message", () => {
    const expected = catalogueEntries().map(([code, entry]) => [
      code,
      String(entry.status),
      problemType(code),
      entry.title,
      entry.message,
    ]);
    assert.deepEqual(guideRows(), expected);
  });

  test('an HTTP_<status> code answers with that status, and only own problems have a type URI', () => {
    for (const [code, entry] of catalogueEntries()) {
      if (code.startsWith('HTTP_')) assert.equal(code, `HTTP_${entry.status}`);
      assert.equal(problemType(code) === 'about:blank', !entry.own, code);
    }
  });

  test('every own problem type is explained at the page its URI points to, by a service that answers it', async () => {
    // The page is served with problem details, and explains the types its service answers: the bank
    // answers every own problem but 428 (IDEMPOTENCY_KEY_REQUIRED when it requires keys), the to-do
    // service 428 when it requires If-Match; DEADLINE_EXCEEDED with a deadline, OVERLOADED when it
    // sheds load, RATE_LIMITED under rate limits, CROSS_ORIGIN_REFUSED under cross-origin protection,
    // OPERATION_SUNSET with an operation deprecated.
    const requireKeys = { required: true, ttlMs: DEFAULT_IDEMPOTENCY_TTL_MS };
    const pages: string[] = [];
    for (const options of [
      {
        service: 'bank',
        idempotency: requireKeys,
        deadlineMs: 15_000,
        shedding: { waitingMax: 1_000 },
        rateLimiting: { limits: { writes: { perSecond: 10, burst: 10 } } },
      },
      {
        service: 'todo',
        requireIfMatch: true,
        crossOriginProtection: true,
        deprecations: [
          { method: 'GET', path: '/v2/todos/{todo_id}', deprecatedAtMs: 0, sunsetAtMs: 1 },
        ],
      },
    ] as const) {
      await withServer({ ...options, errors: 'problem' }, async (url) => {
        const res = await get(url, PROBLEM_TYPE_BASE.slice(0, PROBLEM_TYPE_BASE.indexOf('#')));
        assert.equal(res.status, 200);
        assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
        pages.push(res.text);
      });
    }
    for (const [code, entry] of catalogueEntries().filter(([, e]) => e.own)) {
      const anchor = problemType(code).slice(PROBLEM_TYPE_BASE.length);
      const page = pages.find((text) => text.includes(`<section id="${anchor}">`));
      assert.ok(page !== undefined, `${code} has a section on a page`);
      assert.match(page, new RegExp(`<section id="${anchor}">\\s*<h2>${entry.title}</h2>`), code);
      assert.ok(
        entry.about !== undefined && page.includes(entry.about.slice(0, 40)),
        `${code} is explained`,
      );
    }
  });
});
