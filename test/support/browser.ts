// A real browser for tests: Debian's chromium driven by playwright-core, a fresh profile each time,
// with the flags this machine needs. Without it a suite is skipped with the reason, unless
// REQUIRE_BROWSER=1 (as in CI), which makes the missing browser a failure.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';

/** False when the browser is there; else why its suites are skipped. */
export function browserSkip(): string | false {
  if (existsSync(CHROMIUM)) return false;
  if (process.env.REQUIRE_BROWSER === '1')
    throw new Error(`REQUIRE_BROWSER=1 but ${CHROMIUM} is missing (apt-get install chromium)`);
  return `no browser at ${CHROMIUM}: install Debian's chromium to run the browser tests`;
}

export async function withBrowser(body: (browser: BrowserContext) => Promise<void>): Promise<void> {
  const profile = mkdtempSync(join(tmpdir(), 'test-browser-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  try {
    await body(browser);
  } finally {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  }
}
