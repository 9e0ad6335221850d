// CORS in a real browser: a page served from another origin calls the services with fetch() and
// reads each answer's status, body and X-Request-Id (and Retry-After), errors, failures, the
// deadline's 504 and the shed 503 included, as a front-end developer's page would. Without the
// service's CORS headers the browser would hide all of it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { parseCorsOrigins, type CorsPolicy } from '../../src/features/cors/cors.js';
import { browserSkip, withBrowser } from '../support/browser.js';
import { get } from '../support/http.js';
import { withServer } from '../support/server.js';
import { processSuiteUnless } from '../support/suite.js';

interface Seen {
  readonly status: number;
  readonly body: string;
  readonly requestId: string | null;
}

/** The `detail` of a default-format error body. */
const detailOf = (body: string | undefined): { code: string } =>
  (JSON.parse(body ?? '') as { detail: { code: string } }).detail;

/** A page on its own origin (another port): it only serves an empty document for the script to run in. */
async function startPage(): Promise<{ readonly origin: string; readonly server: Server }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>client</title><link rel="icon" href="data:,">');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

processSuiteUnless(browserSkip(), 'CORS in a browser', () => {
  test('a page on an allowed origin reads the status, body and X-Request-Id of a 200, a 404, a 401, a 422, insufficient funds and the 500 of /crash', async () => {
    const page = await startPage();
    try {
      await withServer(
        {
          service: 'bank',
          errors: 'unified',
          catchAll: true,
          cors: parseCorsOrigins(page.origin) as CorsPolicy,
        },
        (api) =>
          withBrowser(async (browser) => {
            const tab = await browser.newPage();
            await tab.goto(page.origin);
            const calls: [string, string][] = [
              ['GET', '/accounts/alice'],
              ['GET', '/accounts/nobody'],
              ['GET', '/secret'],
              ['POST', '/withdraw/alice/x'],
              ['POST', '/withdraw/bob/6'],
              ['GET', '/crash'],
            ];
            const seen = await tab.evaluate(
              async ({ base, calls }) =>
                Promise.all(
                  calls.map(async ([method, path]) => {
                    const res = await fetch(base + path, {
                      method,
                      headers: { 'Idempotency-Key': 'browser-key-' + path },
                    });
                    return {
                      status: res.status,
                      body: await res.text(),
                      requestId: res.headers.get('X-Request-Id'),
                    };
                  }),
                ),
              { base: api, calls },
            );
            const statuses = seen.map((answer: Seen) => answer.status);
            assert.deepEqual(statuses, [200, 404, 401, 422, 400, 500]);
            assert.deepEqual(JSON.parse(seen[1]?.body ?? ''), {
              error: { code: 'HTTP_404', message: 'Account nobody not found' },
            });
            assert.deepEqual(JSON.parse(seen[4]?.body ?? ''), {
              error: { code: 'NOT_ENOUGH_MONEY', message: 'Balance is 5, you asked for 6' },
            });
            assert.deepEqual(JSON.parse(seen[5]?.body ?? ''), {
              error: { code: 'INTERNAL', message: 'Something went wrong on our side' },
            });
            for (const answer of seen)
              assert.match(answer.requestId ?? '', /^[0-9a-f-]{36}$/, JSON.stringify(answer));
          }),
      );
    } finally {
      await new Promise((resolve) => page.server.close(resolve));
    }
  });

  test('a page on an allowed origin reads the status, body, Retry-After, RateLimit fields and X-Request-Id of a 429', async () => {
    const page = await startPage();
    try {
      const rateLimits = { limits: { writes: { perSecond: 0.001, burst: 1 } } };
      await withServer(
        {
          service: 'bank',
          errors: 'problem',
          cors: parseCorsOrigins(page.origin) as CorsPolicy,
          rateLimiting: rateLimits,
        },
        (api) =>
          withBrowser(async (browser) => {
            const tab = await browser.newPage();
            await tab.goto(page.origin);
            const seen = await tab.evaluate(async (base) => {
              const answers = [];
              for (let i = 0; i < 2; i++) {
                const res = await fetch(`${base}/withdraw/alice/1`, { method: 'POST' });
                answers.push({
                  status: res.status,
                  body: await res.text(),
                  requestId: res.headers.get('X-Request-Id'),
                  retryAfter: res.headers.get('Retry-After'),
                  policy: res.headers.get('RateLimit-Policy'),
                  state: res.headers.get('RateLimit'),
                });
              }
              return answers;
            }, api);
            assert.deepEqual(
              seen.map((answer) => answer.status),
              [200, 429],
            );
            const refused = seen[1] as (typeof seen)[number];
            assert.equal((JSON.parse(refused.body) as { code: string }).code, 'RATE_LIMITED');
            assert.match(refused.retryAfter ?? '', /^\d+$/);
            assert.equal(refused.policy, '"writes";q=2;w=1000');
            assert.match(refused.state ?? '', /^"writes";r=0;t=\d+$/);
            assert.match(refused.requestId ?? '', /^[0-9a-f-]{36}$/);
          }),
      );
    } finally {
      await new Promise((resolve) => page.server.close(resolve));
    }
  });

  test('a page on an allowed origin reads the status, body, X-Request-Id and Retry-After of the deadline 504 and of the shed 503', async () => {
    const page = await startPage();
    const dir = mkdtempSync(join(tmpdir(), 'cors-edge-'));
    const file = join(dir, 'todo.sqlite');
    try {
      const options = {
        service: 'todo' as const,
        db: { kind: 'sqlite' as const, path: file },
        cors: parseCorsOrigins(page.origin) as CorsPolicy,
        deadlineMs: 1_000,
        shedding: { waitingMax: 1 },
      };
      await withServer(options, (api) =>
        withBrowser(async (browser) => {
          const tab = await browser.newPage();
          await tab.goto(page.origin);
          // Another connection holds the write lock: the write waits (and meets its deadline), and
          // while it waits the service is past its signal (one request waiting), so the read is
          // shed.
          const holder = new Database(file);
          holder.pragma('busy_timeout = 0');
          holder.exec('BEGIN IMMEDIATE');
          try {
            const seen = await tab.evaluate(async (base) => {
              const read = async (res: Response) => ({
                status: res.status,
                body: await res.text(),
                requestId: res.headers.get('X-Request-Id'),
                retryAfter: res.headers.get('Retry-After'),
              });
              const write = fetch(base + '/todos', {
                method: 'POST',
                headers: { 'Content-Type': 'application/json' },
                body: '{"title":"late"}',
              }).then(read);
              await new Promise((resolve) => setTimeout(resolve, 300));
              const shed = await fetch(base + '/todos/1').then(read);
              return [await write, shed];
            }, api);
            assert.deepEqual(
              seen.map((answer) => answer.status),
              [504, 503],
            );
            assert.equal(detailOf(seen[0]?.body).code, 'DEADLINE_EXCEEDED');
            assert.equal(detailOf(seen[1]?.body).code, 'OVERLOADED');
            assert.equal(seen[0]?.retryAfter, '1');
            assert.match(seen[1]?.retryAfter ?? '', /^[123]$/);
            for (const answer of seen)
              assert.match(answer.requestId ?? '', /^[0-9a-f-]{36}$/, JSON.stringify(answer));
          } finally {
            holder.exec('ROLLBACK');
            holder.close();
          }
        }),
      );
    } finally {
      await new Promise((resolve) => page.server.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a page on an unlisted origin cannot withdraw with a plain fetch() POST: the balance stays; a listed page's withdrawal runs", async () => {
    const listed = await startPage();
    const unlisted = await startPage();
    try {
      await withServer(
        { service: 'bank', cors: parseCorsOrigins(listed.origin) as CorsPolicy },
        (api) =>
          withBrowser(async (browser) => {
            const balance = async (): Promise<number> =>
              (JSON.parse((await get(api, '/accounts/alice')).text) as { balance: number }).balance;
            // A POST without a body or custom header is a "simple" request: the browser sends it
            // without a preflight, so only the service can stop it.
            const withdraw = (url: string): Promise<string> =>
              fetch(url, { method: 'POST' }).then(
                (res) => `status ${res.status}`,
                (error: unknown) => `refused: ${String(error)}`,
              );
            const forger = await browser.newPage();
            await forger.goto(unlisted.origin);
            const forged = await forger.evaluate(withdraw, `${api}/withdraw/alice/1`);
            assert.match(forged, /^refused: TypeError/, 'the browser hides the answer, as before');
            assert.equal(await balance(), 100, 'and now the withdrawal did not run either');
            const page = await browser.newPage();
            await page.goto(listed.origin);
            assert.equal(await page.evaluate(withdraw, `${api}/withdraw/alice/1`), 'status 200');
            assert.equal(await balance(), 99);
          }),
      );
    } finally {
      await new Promise((resolve) => listed.server.close(resolve));
      await new Promise((resolve) => unlisted.server.close(resolve));
    }
  });

  test('started as the README starts it (no CORS option), the bank refuses a form and a fetch() POST from a page on another site: the balance stays', async () => {
    const other = await startPage();
    try {
      const lines: string[] = [];
      await withServer({ service: 'bank', logLines: lines }, (api) =>
        withBrowser(async (browser) => {
          const balance = async (): Promise<number> =>
            (JSON.parse((await get(api, '/accounts/alice')).text) as { balance: number }).balance;
          const page = await browser.newPage();
          await page.goto(other.origin);
          // A form posted into a frame, as a forged page would, and a plain fetch() POST.
          await page.evaluate(`new Promise((resolve) => {
            const frame = document.createElement('iframe');
            frame.name = 'sink';
            frame.addEventListener('load', resolve);
            document.body.append(frame);
            const form = document.createElement('form');
            form.method = 'POST';
            form.action = ${JSON.stringify(`${api}/withdraw/alice/1`)};
            form.target = 'sink';
            document.body.append(form);
            form.submit();
          })`);
          const fetched = await page.evaluate(
            (url: string) =>
              fetch(url, { method: 'POST', mode: 'no-cors' }).then(
                () => 'sent',
                (error: unknown) => `refused: ${String(error)}`,
              ),
            `${api}/withdraw/alice/1`,
          );
          assert.equal(fetched, 'sent', 'the browser sent it: only the service can stop it');
          assert.equal(await balance(), 100);
          const refused = (): string[] =>
            lines.filter(
              (line) =>
                line.includes(`"path":"/withdraw/alice/1"`) && line.includes(`"status":403`),
            );
          // An access line is written after its answer: the second may still be on its way.
          for (let waitedMs = 0; refused().length < 2 && waitedMs < 2000; waitedMs += 20)
            await new Promise((resolve) => setTimeout(resolve, 20));
          assert.equal(refused().length, 2, 'both reached the service, and were refused');
        }),
      );
    } finally {
      await new Promise((resolve) => other.server.close(resolve));
    }
  });

  test('a page on an allowed origin carries its trace: a fetch() with traceparent, tracestate and baggage passes its preflight', async () => {
    const page = await startPage();
    try {
      await withServer(
        { service: 'todo', cors: parseCorsOrigins(page.origin) as CorsPolicy },
        (api) =>
          withBrowser(async (browser) => {
            const tab = await browser.newPage();
            await tab.goto(page.origin);
            const status = await tab.evaluate(
              (url: string) =>
                fetch(url, {
                  headers: {
                    traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
                    tracestate: 'congo=t61rcWkgMzE',
                    baggage: 'userId=alice',
                  },
                }).then(
                  (res) => `status ${res.status}`,
                  (error: unknown) => `refused: ${String(error)}`,
                ),
              `${api}/todos/1`,
            );
            assert.equal(status, 'status 200');
          }),
      );
    } finally {
      await new Promise((resolve) => page.server.close(resolve));
    }
  });

  test('a page on another origin is refused by the browser: fetch() fails without showing the answer', async () => {
    const page = await startPage();
    try {
      await withServer(
        { service: 'bank', cors: parseCorsOrigins('https://app.example') as CorsPolicy },
        (api) =>
          withBrowser(async (browser) => {
            const tab = await browser.newPage();
            await tab.goto(page.origin);
            const outcome = await tab.evaluate(
              async (url) =>
                fetch(url).then(
                  (res) => `status ${res.status}`,
                  (error: unknown) => `refused: ${String(error)}`,
                ),
              `${api}/accounts/alice`,
            );
            assert.match(outcome, /^refused: TypeError/);
          }),
      );
    } finally {
      await new Promise((resolve) => page.server.close(resolve));
    }
  });
});
