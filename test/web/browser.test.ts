// The web UI in a real browser: Debian's chromium (/usr/bin/chromium) driven
// by playwright-core, against `mimir serve` on a lake of the sample workspace
// (setup.ts). Searching hash_str leads to fnvish::hash_str's page (its file,
// line, and callers tally::Tally::add and tally::Tally::count), a caller's
// link opens that caller's page at the call line, an unknown path offers
// did-you-mean links, search works from the keyboard alone, the lake page
// lists repos, crates and tables, and no page logs a console error or asks
// anything of another host. Each page is saved as a screenshot under
// os.tmpdir()/mimir-web-screens (printed), in light and dark, wide and narrow.
// Without chromium the tests are skipped with a loud message; under CI=true
// they fail with the reason instead (.ci/run installs chromium).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { closeClean, launch, needBrowser as need, openPage, shot, type Watched } from './chromium.ts';
import { sampleWebServer, type WebSetup } from './setup.ts';

let s: WebSetup | undefined;
let browser: Browser | undefined;
let noBrowser: string | undefined;

before(async () => {
  const b = await launch();
  if ('noBrowser' in b) {
    noBrowser = b.noBrowser;
    return;
  }
  browser = b.browser;
  s = await sampleWebServer('mimir-web-browser-');
});
after(async () => {
  await browser?.close();
  await s?.cleanup();
});

const needBrowser = (t: { skip: (msg: string) => void }): boolean => need(t, noBrowser);
const open = (opts: { colorScheme?: 'light' | 'dark'; width?: number } = {}): Promise<Watched> => openPage(browser!, s!.server.url, opts);

test('web: search hash_str, open it: its file, line and callers; a caller opens its own page at the call line', { timeout: 180_000 }, async (t) => {
  if (!needBrowser(t)) return;
  const w = await open();
  const { page } = w;
  await page.goto(`${s!.server.url}/`);
  await page.getByLabel('Search items by name').fill('hash_str');
  await page.waitForURL(/\/search\?q=hash_str$/);
  const hit = page.locator('#hits li').filter({ hasText: 'fnvish::hash_str' });
  await hit.waitFor();
  assert.match(await hit.innerText(), /fn[\s\S]*fnvish::hash_str[\s\S]*fnvish@0\.2\.1[\s\S]*src\/lib\.rs:17/);
  await shot(page, 'search');

  await hit.getByRole('link', { name: 'fnvish::hash_str' }).click();
  await page.waitForURL(/\/item\/fnvish::hash_str$/);
  await page.getByRole('heading', { level: 1, name: 'fnvish::hash_str' }).waitFor();
  await page.locator('.facts .place', { hasText: 'src/lib.rs:17:8' }).waitFor();
  await page.locator('pre.signature', { hasText: 'pub fn hash_str(s: &str) -> u64' }).waitFor();
  await page.locator('#L17.in-item', { hasText: 'pub fn hash_str' }).waitFor();
  const callers = page.getByRole('list', { name: 'callers of fnvish::hash_str' });
  await callers.getByRole('link', { name: 'tally::Tally::count' }).waitFor();
  assert.deepEqual(await callers.locator(':scope > li .qpath').allInnerTexts(), ['tally::Tally::add', 'tally::Tally::count']);
  // the tree opens a caller's callers on demand
  await callers.getByRole('button', { name: 'show the callers of tally::Tally::add' }).click();
  await page.getByRole('list', { name: 'callers of tally::Tally::add' }).or(page.getByText('No callers')).first().waitFor();
  await page.getByRole('heading', { name: 'References' }).waitFor();
  await page.locator('.refs summary', { hasText: 'calls' }).waitFor();
  await shot(page, 'item-hash_str');

  await callers.getByRole('link', { name: 'tally::Tally::add' }).click();
  await page.waitForURL(/\/item\/tally::Tally::add\?at=20$/);
  await page.getByRole('heading', { level: 1, name: 'tally::Tally::add' }).waitFor();
  const at = page.locator('#L20.at');
  await at.waitFor();
  assert.match(await at.innerText(), /hash_str/, 'the call line is marked');
  await page.getByRole('list', { name: 'callees of tally::Tally::add' }).getByRole('link', { name: 'fnvish::hash_str' }).waitFor();
  await shot(page, 'item-caller-add');
  // back returns to the callee's page
  await page.goBack();
  await page.getByRole('heading', { level: 1, name: 'fnvish::hash_str' }).waitFor();
  await closeClean(w);
});

test('web: an unknown path is a page with did-you-mean links that lead to the item', { timeout: 120_000 }, async (t) => {
  if (!needBrowser(t)) return;
  const w = await open();
  const { page } = w;
  await page.goto(`${s!.server.url}/item/fnvish::hash_st`);
  await page.getByRole('heading', { name: 'No item has this path' }).waitFor();
  await page.getByText(/did you mean fnvish::hash_str/).waitFor();
  const link = page.getByRole('alert').getByRole('link', { name: 'fnvish::hash_str' });
  assert.equal(await link.getAttribute('href'), '/item/fnvish::hash_str');
  assert.equal(await page.getByRole('alert').getByRole('link', { name: 'Search for “hash_st”' }).getAttribute('href'), '/search?q=hash_st');
  await shot(page, 'unknown-path');
  await link.click();
  await page.getByRole('heading', { level: 1, name: 'fnvish::hash_str' }).waitFor();
  // the one console error allowed: the browser's report of the API's 404 for the unknown path itself
  await closeClean(w, [/Failed to load resource: the server responded with a status of 404 .*\/api\/def\?path=fnvish%3A%3Ahash_st\)$/]);
});

test('web: keyboard only — / focuses the search, arrows move, Enter opens; time travel keeps asOf in every link and call', { timeout: 120_000 }, async (t) => {
  if (!needBrowser(t)) return;
  const w = await open();
  const { page } = w;
  await page.goto(`${s!.server.url}/lake`);
  await page.getByRole('heading', { name: 'The lake' }).waitFor();
  await page.keyboard.press('/');
  await page.waitForURL(/\/$/);
  await page.waitForFunction("document.activeElement?.id === 'q'");
  await page.keyboard.type('tally');
  await page.waitForURL(/\/search\?q=tally$/);
  await page.locator('section[aria-busy="false"] #hits li').nth(1).waitFor();
  const second = await page.locator('#hits li').nth(1).locator('.qpath').innerText();
  await page.keyboard.press('ArrowDown');
  await page.locator('#hits li.active').filter({ hasText: second }).waitFor();
  await page.keyboard.press('Enter');
  await page.waitForURL((u) => decodeURIComponent(u.pathname) === `/item/${second}`);
  await page.getByRole('heading', { level: 1, name: second }).waitFor();
  // `/` from an item page brings the search back
  await page.keyboard.press('/');
  await page.waitForFunction("document.activeElement?.id === 'q'");
  // Enter before the answer came: it is asked at once and its best hit opened when it comes
  await page.keyboard.type('hash_str');
  await page.keyboard.press('Enter');
  await page.waitForURL(/\/item\/fnvish::hash_str$/);
  await page.getByRole('heading', { level: 1, name: 'fnvish::hash_str' }).waitFor();

  // as of the first generation that has the sample: asOf stays in the URL and reaches every API call
  const asked: string[] = [];
  page.on('request', (r) => {
    if (r.url().includes('/api/')) asked.push(r.url());
  });
  const g = Number(JSON.parse(await (await fetch(`${s!.server.url}/api/def?path=fnvish::hash_str`)).text()).generation);
  await page.goto(`${s!.server.url}/item/fnvish::hash_str?asOf=${g}`);
  await page.getByRole('status').filter({ hasText: `Reading the lake as of ${g}` }).waitFor();
  await page.getByRole('list', { name: 'callers of fnvish::hash_str' }).getByRole('link', { name: 'tally::Tally::add' }).click();
  await page.waitForURL(new RegExp(`/item/tally::Tally::add\\?asOf=${g}&at=20$`));
  await page.locator('#L20.at').waitFor();
  assert.ok(asked.length >= 6, asked.join('\n'));
  assert.deepEqual(asked.filter((u) => new URL(u).searchParams.get('asOf') !== String(g)), [], 'every API call carries asOf');
  await closeClean(w);
});

test('web: the lake page lists repos, universe crates, tables and generations; pages read in dark mode and in a narrow window', { timeout: 180_000 }, async (t) => {
  if (!needBrowser(t)) return;
  const w = await open();
  await w.page.goto(`${s!.server.url}/lake`);
  await w.page.getByRole('heading', { name: /Repos \(1\)/ }).waitFor();
  const text = await w.page.locator('main').innerText();
  assert.match(text, /sample: tally-cli@0\.1\.0, tally@0\.1\.0/);
  assert.match(text, /Universe crates \(1\)[\s\S]*fnvish@0\.2\.1/);
  assert.match(text, /mimir\.code_node_events/);
  assert.match(text, /Newest generations/);
  await shot(w.page, 'lake');
  await closeClean(w);

  for (const [name, opts] of [
    ['dark', { colorScheme: 'dark' as const }],
    ['narrow', { width: 380 }],
  ] as const) {
    const v = await open(opts);
    await v.page.goto(`${s!.server.url}/item/fnvish::hash_str`);
    await v.page.getByRole('list', { name: 'callers of fnvish::hash_str' }).waitFor();
    await v.page.locator('#L17').waitFor();
    // nothing wider than the window but the code, which scrolls in its own box
    const wide = await v.page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    assert.ok(wide <= 0, `${name}: the page is ${wide} px wider than the window`);
    await shot(v.page, `item-${name}`);
    await v.page.goto(`${s!.server.url}/search?q=tally`);
    await v.page.locator('#hits li').first().waitFor();
    await shot(v.page, `search-${name}`);
    await v.page.goto(`${s!.server.url}/lake`);
    await v.page.getByRole('heading', { name: /Tables/ }).waitFor();
    await shot(v.page, `lake-${name}`);
    await closeClean(v);
  }
});
