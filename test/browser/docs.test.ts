// The documentation pages in a real browser, with every request to another host refused: the
// pages must render from what our own server serves, show each operation's codes, try no other
// host at all (no exceptions), and log no console error (a missing favicon included).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { browserSkip, withBrowser } from '../support/browser.js';
import { withServer } from '../support/server.js';
import { processSuiteUnless } from '../support/suite.js';

const skip = browserSkip();

interface OfflinePage {
  readonly page: Page;
  /** Requests to any other host, refused. */
  readonly foreign: string[];
  /** Console errors and uncaught page errors. */
  readonly errors: string[];
}

/** Opens a page with the network cut to our own server, recording foreign requests and errors. */
async function openOffline(browser: BrowserContext, url: string): Promise<OfflinePage> {
  const page = await browser.newPage();
  const origin = new URL(url).origin;
  const foreign: string[] = [];
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => errors.push(error.message));
  await page.route('**/*', (route) => {
    const target = route.request().url();
    if (target.startsWith(origin) || target.startsWith('data:') || target.startsWith('blob:'))
      return route.continue();
    foreign.push(target);
    return route.abort();
  });
  await page.goto(url, { waitUntil: 'load' });
  // Headless Chromium may not ask for /favicon.ico at all, so the icon is checked where it is
  // named: inline, a browser that does ask finds it without a request and without a 404.
  assert.match((await page.locator('link[rel="icon"]').getAttribute('href')) ?? '', /^data:/);
  return { foreign, errors, page };
}

processSuiteUnless(skip, 'documentation in a browser', () => {
  test('Swagger UI at /docs renders every operation with its documented codes, offline', () =>
    withServer({ service: 'todo' }, (url) =>
      withBrowser(async (browser) => {
        const { foreign, errors, page } = await openOffline(browser, `${url}/docs`);
        await page.waitForSelector('.opblock', { timeout: 15_000 });
        const operations = await page.locator('.opblock-summary-path').allInnerTexts();
        assert.equal(operations.length, 7);
        assert.ok(operations.some((text) => text.includes('/v2/todos/{todo_id}')));
        await page.locator('.opblock-summary', { hasText: '/v2/todos/{todo_id}' }).first().click();
        await page.waitForSelector('.responses-table', { timeout: 10_000 });
        const codes = await page.locator('.response-col_status').allInnerTexts();
        for (const code of ['200', '404', '422'])
          assert.ok(
            codes.some((text) => text.trim().startsWith(code)),
            `code ${code} shown`,
          );
        assert.ok(await page.getByText('No todo with this id').first().isVisible());
        assert.deepEqual(foreign, []);
        assert.deepEqual(errors, []);
      }),
    ));

  test("Swagger UI shows each response row its own example, with that row's status, and no server selector", async () => {
    /** The example Swagger UI shows for one response row of one operation, as JSON. */
    const shownExample = async (page: Page, path: string, code: string): Promise<unknown> => {
      await page.locator('.opblock-summary', { hasText: path }).first().click();
      const example = page.locator(`tr.response[data-code="${code}"] pre.example`).first();
      await example.waitFor({ timeout: 10_000 });
      return JSON.parse(await example.innerText());
    };
    await withServer({ service: 'bank', errors: 'problem' }, (url) =>
      withBrowser(async (browser) => {
        const { foreign, errors, page } = await openOffline(browser, `${url}/docs`);
        await page.waitForSelector('.opblock', { timeout: 15_000 });
        // The case: this row showed the schema's first enum values, status 400 and
        // HTTP_400.
        assert.deepEqual(await shownExample(page, '/secret', '401'), {
          type: 'about:blank',
          title: 'Unauthorized',
          status: 401,
          detail: 'Login needed',
          code: 'HTTP_401',
        });
        assert.equal(await page.locator('.servers').count(), 0, 'a server selector');
        assert.deepEqual(foreign, []);
        assert.deepEqual(errors, []);
      }),
    );
    await withServer({ service: 'bank' }, (url) =>
      withBrowser(async (browser) => {
        const { foreign, errors, page } = await openOffline(browser, `${url}/docs`);
        await page.waitForSelector('.opblock', { timeout: 15_000 });
        // And this one showed NOT_ENOUGH_MONEY, a code the default format never even sends.
        assert.deepEqual(await shownExample(page, '/accounts/{account}/limits', '403'), {
          detail: { code: 'LIMITS_HIDDEN', message: 'Only managers can see limits' },
        });
        assert.equal(await page.locator('.servers').count(), 0, 'a server selector');
        assert.deepEqual(foreign, []);
        assert.deepEqual(errors, []);
      }),
    );
  });

  test('ReDoc at /redoc renders the API, offline', () =>
    withServer({ service: 'bank', errors: 'unified' }, (url) =>
      withBrowser(async (browser) => {
        const { foreign, errors, page } = await openOffline(browser, `${url}/redoc`);
        await page.waitForSelector('h1', { timeout: 20_000 });
        assert.match(await page.locator('h1').first().innerText(), /Banking service \(unified\)/);
        assert.ok((await page.getByText('/withdraw/{account}/{amount}').count()) > 0);
        // The side menu, where ReDoc shows its maker's logo, has been drawn.
        await page.waitForSelector('img[alt="redocly logo"]', { timeout: 10_000 });
        assert.deepEqual(foreign, []);
        assert.deepEqual(errors, []);
      }),
    ));

  test('the problem types page at /docs/problems, offline', () =>
    withServer({ service: 'bank', errors: 'problem' }, (url) =>
      withBrowser(async (browser) => {
        const { foreign, errors, page } = await openOffline(
          browser,
          `${url}/docs/problems#not-enough-money`,
        );
        assert.equal(await page.locator('#not-enough-money h2').innerText(), 'Not enough money');
        assert.deepEqual(foreign, []);
        assert.deepEqual(errors, []);
      }),
    ));
});
