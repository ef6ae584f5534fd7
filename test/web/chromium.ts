// What the browser tests share (browser.test.ts, pages.test.ts): Debian's
// chromium (/usr/bin/chromium, or MIMIR_TEST_CHROMIUM) driven by
// playwright-core; a page that records console errors, page errors and any
// request that leaves the server under test; screenshots saved under
// os.tmpdir()/mimir-web-screens. Without chromium a test is skipped with a
// loud message; under CI=true it fails with the reason instead.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';

/** Debian's chromium; MIMIR_TEST_CHROMIUM names another (the skip and CI paths are checked with a missing one). */
export const CHROMIUM = process.env.MIMIR_TEST_CHROMIUM ?? '/usr/bin/chromium';
export const SCREENS = path.join(os.tmpdir(), 'mimir-web-screens');
/** Generous: a page's answers on a machine at load 16 (measured locally: well under 1 s each). */
export const WAIT_MS = 30_000;

/** The browser, or why there is none. */
export async function launch(): Promise<{ browser: Browser } | { noBrowser: string }> {
  try {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    mkdirSync(SCREENS, { recursive: true });
    console.log(`web: screenshots in ${SCREENS}`);
    return { browser };
  } catch (e) {
    return { noBrowser: `chromium could not start from ${CHROMIUM} (${(e as Error).message.split('\n')[0]}); install it with: apt-get install -y chromium` };
  }
}

/** Skip (loudly) without a browser; under CI fail with the reason. */
export function needBrowser(t: { skip: (msg: string) => void }, noBrowser: string | undefined): boolean {
  if (noBrowser === undefined) return true;
  if (process.env.CI === 'true') throw new Error(`the browser tests cannot run: ${noBrowser}`);
  console.warn(`\n!!! SKIPPED the web UI browser test: ${noBrowser} !!!\n`);
  t.skip(noBrowser);
  return false;
}

export interface Watched {
  page: Page;
  context: BrowserContext;
  errors: string[];
  foreign: string[];
}

/** A fresh page that records console errors, page errors and any request not to `serverUrl`. */
export async function openPage(browser: Browser, serverUrl: string, opts: { colorScheme?: 'light' | 'dark'; width?: number; downloads?: boolean } = {}): Promise<Watched> {
  const context = await browser.newContext({ colorScheme: opts.colorScheme ?? 'light', viewport: { width: opts.width ?? 1100, height: 800 }, acceptDownloads: opts.downloads ?? false });
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT_MS);
  const w: Watched = { page, context, errors: [], foreign: [] };
  page.on('console', (m) => {
    if (m.type() === 'error') w.errors.push(`${m.text()} (${m.location().url})`);
  });
  page.on('pageerror', (e) => w.errors.push(`page error: ${e.message}`));
  page.on('request', (r) => {
    if (!r.url().startsWith(`${serverUrl}/`) && !r.url().startsWith('data:') && !r.url().startsWith('blob:')) w.foreign.push(r.url());
  });
  return w;
}

export async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SCREENS, `${name}.png`), fullPage: true });
}

export async function closeClean(w: Watched, allowed: RegExp[] = []): Promise<void> {
  await w.context.close();
  assert.deepEqual(w.errors.filter((e) => !allowed.some((a) => a.test(e))), [], 'no console errors');
  assert.deepEqual(w.foreign, [], 'no request leaves this server');
}
