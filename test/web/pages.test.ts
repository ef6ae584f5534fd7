// The web UI's graph, history and diff pages in a real browser (chromium.ts),
// against `mimir serve` on a lake of a small scripted git history
// (test/ingest/git-history.ts: its first three commits — base, shift (a line
// shift), rename (tally::tally_text -> tally::count_words, tally_cli::main's
// call updated) — ingested with --git and the dependencies):
// - /graph/fnvish::hash_str draws an SVG with a box per caller (tally::Tally::add,
//   tally::Tally::count one level up), boxes close and open, the level choice
//   is in the URL, a label opens the item's page, and "Export SVG" downloads a
//   well-formed standalone SVG holding the same boxes;
// - /history/tally_cli::main lists its events with the commits (id and
//   subject) that made them, and its change at `rename` with the source
//   before and after;
// - /diff?from=shift&to=rename lists exactly the scripted changes, grouped by
//   crate, with source before and after; "Public only" keeps the rename;
// - an unknown path on /graph is a page with did-you-mean links.
// No page logs a console error (but the 404s the error page asks for) or asks
// anything of another host. Screenshots (light, dark, narrow) go where
// browser.test.ts puts its own.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { scratch } from '../helpers.ts';
import { runCli } from '../cli/run-cli.ts';
import { buildGitHistory, type GitHistory } from '../ingest/git-history.ts';
import { startServer, type RunningServer } from '../../src/serve/server.ts';
import { buildWeb } from '../../scripts/build-web.ts';
import { closeClean, launch, needBrowser as need, openPage, shot, type Watched } from './chromium.ts';
import { xmlElements } from './xml.ts';

let browser: Browser | undefined;
let noBrowser: string | undefined;
let server: RunningServer | undefined;
let h: GitHistory;
const work = scratch('mimir-web-pages-');

before(async () => {
  const b = await launch();
  if ('noBrowser' in b) {
    noBrowser = b.noBrowser;
    return;
  }
  browser = b.browser;
  h = buildGitHistory(work.dir);
  const lake = path.join(work.dir, 'lake');
  for (const rev of [h.sha.base, `${h.sha.base}..${h.sha.rename}`]) {
    const r = await runCli(['--lake', lake, 'ingest', h.dir, '--git', rev, '--with-deps']);
    if (r.code !== 0) throw new Error(`ingest --git ${rev} failed (exit ${r.code}): ${r.stderr}`);
  }
  const web = await buildWeb(path.join(work.dir, 'web'));
  server = await startServer({ lake, port: 0, webDir: web.dir });
});
after(async () => {
  await browser?.close();
  await server?.close();
  work.cleanup();
});

const needBrowser = (t: { skip: (msg: string) => void }): boolean => need(t, noBrowser);
const open = (opts: { colorScheme?: 'light' | 'dark'; width?: number; downloads?: boolean } = {}): Promise<Watched> => openPage(browser!, server!.url, opts);

test('web: /graph/fnvish::hash_str draws its callers, opens and closes boxes, keeps the levels in the URL, and exports a standalone SVG', { timeout: 240_000 }, async (t) => {
  if (!needBrowser(t)) return;
  const w = await open({ downloads: true });
  const { page } = w;
  // from the item page's link
  await page.goto(`${server!.url}/item/fnvish::hash_str`);
  await page.getByRole('link', { name: 'Call graph' }).click();
  await page.waitForURL(/\/graph\/fnvish::hash_str$/);
  const svg = page.getByRole('img', { name: 'call graph of fnvish::hash_str' });
  await svg.waitFor();
  const labels = async (level: number): Promise<string[]> => (await svg.locator(`g.box[data-level="${level}"]`).evaluateAll((gs) => gs.map((g) => g.getAttribute('data-label') ?? ''))).sort();
  assert.deepEqual(await labels(0), ['fnvish::hash_str']);
  assert.deepEqual(await labels(-1), ['tally::Tally::add', 'tally::Tally::count']);
  assert.ok((await labels(1)).length >= 1, 'hash_str calls hash_bytes');
  const before = await svg.locator('g.box').count();
  assert.equal(await svg.locator('path.edge').count() >= 3, true, 'an edge per call');
  await shot(page, 'graph-hash_str');

  // a box closes (its callers go) and opens again, from the keyboard
  const add = page.getByRole('button', { name: 'close the callers of tally::Tally::add' });
  const level2 = (await labels(-2)).length;
  await add.focus();
  await page.keyboard.press('Enter');
  await page.getByRole('button', { name: 'open the callers of tally::Tally::add' }).waitFor();
  assert.ok((await svg.locator('g.box').count()) <= before, 'closing hides, never adds');
  await page.getByRole('button', { name: 'open the callers of tally::Tally::add' }).press('Enter');
  await add.waitFor();
  assert.equal((await labels(-2)).length, level2);

  // the exported picture: a well-formed SVG with its styles and the same boxes
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export SVG' }).click()]);
  assert.equal(download.suggestedFilename(), 'fnvish.hash_str.graph.svg');
  const text = readFileSync((await download.path())!, 'utf8');
  const doc = xmlElements(text);
  assert.match(doc.root, /^svg\s.*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  assert.ok(doc.names.includes('style'));
  for (const item of ['fnvish::hash_str', 'tally::Tally::add', 'tally::Tally::count']) assert.ok(doc.texts.includes(item), `${item} in the export: ${doc.texts.join(', ')}`);
  assert.equal(doc.texts.length, before, 'a box per box shown');
  // the browser's own XML parser, in a blank page (the UI's CSP would refuse the export's <style> there: it is not the UI's)
  const blank = await w.context.newPage();
  const parsed = (await blank.evaluate(
    `(() => { const d = new DOMParser().parseFromString(${JSON.stringify(text)}, 'image/svg+xml'); return { error: d.querySelector('parsererror')?.textContent ?? null, root: d.documentElement.localName, texts: [...d.querySelectorAll('text')].map((x) => x.textContent) }; })()`,
  )) as { error: string | null; root: string; texts: string[] };
  await blank.close();
  assert.equal(parsed.error, null, 'the browser parses the export');
  assert.equal(parsed.root, 'svg');
  assert.ok(parsed.texts.includes('tally::Tally::count'));

  // one level each way: the URL says so, the callers' callers go
  await page.getByLabel('Levels each way').selectOption('1');
  await page.waitForURL(/\/graph\/fnvish::hash_str\?depth=1$/);
  await page.getByRole('button', { name: 'open the callers of tally::Tally::add' }).waitFor();
  assert.deepEqual(await labels(-2), []);
  assert.deepEqual(await labels(-1), ['tally::Tally::add', 'tally::Tally::count']);
  // a label opens the item's page
  await svg.getByRole('link', { name: 'tally::Tally::count' }).click();
  await page.waitForURL(/\/item\/tally::Tally::count$/);
  await page.getByRole('heading', { level: 1, name: 'tally::Tally::count' }).waitFor();
  await closeClean(w);

  for (const [name, opts] of [
    ['dark', { colorScheme: 'dark' as const }],
    ['narrow', { width: 380 }],
  ] as const) {
    const v = await open(opts);
    await v.page.goto(`${server!.url}/graph/fnvish::hash_str?depth=2`);
    await v.page.getByRole('img', { name: 'call graph of fnvish::hash_str' }).locator('g.box').first().waitFor();
    const wide = await v.page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    assert.ok(wide <= 0, `${name}: the page is ${wide} px wider than the window (the picture scrolls in its own box)`);
    await shot(v.page, `graph-${name}`);
    await closeClean(v);
  }
});

test('web: /history/tally_cli::main lists its events with their commits, and its change with the source before and after', { timeout: 180_000 }, async (t) => {
  if (!needBrowser(t)) return;
  const w = await open();
  const { page } = w;
  await page.goto(`${server!.url}/item/tally_cli::main`);
  await page.getByRole('link', { name: 'History' }).click();
  await page.waitForURL(/\/history\/tally_cli::main$/);
  const events = page.getByRole('list', { name: 'events of tally_cli::main' });
  await events.locator('.entry').first().waitFor();
  const entries = await events.locator(':scope > li').allInnerTexts();
  const withItem = entries.filter((e) => /tally_cli::main/.test(e));
  assert.equal(withItem.length, 2, `an add and a change:\n${entries.join('\n---\n')}`);
  assert.match(withItem[0]!, new RegExp(`commit ${h.sha.base.slice(0, 12)} base[\\s\\S]*add[\\s\\S]*fn[\\s\\S]*tally_cli::main`));
  assert.match(withItem[1]!, new RegExp(`commit ${h.sha.rename.slice(0, 12)} rename[\\s\\S]*change[\\s\\S]*tally_cli::main`));
  const before = page.getByLabel('source of tally_cli::main before');
  const after = page.getByLabel('source of tally_cli::main after');
  await before.locator('.del').first().waitFor();
  assert.match(await before.locator('.del').allInnerTexts().then((x) => x.join('\n')), /tally_text/);
  assert.match(await after.locator('.ins').allInnerTexts().then((x) => x.join('\n')), /count_words\(&text, 16\)/);
  await shot(page, 'history-tally_cli-main');
  await closeClean(w);
  const v = await open({ width: 380, colorScheme: 'dark' });
  await v.page.goto(`${server!.url}/history/tally_cli::main`);
  await v.page.getByLabel('source of tally_cli::main after').locator('.ins').first().waitFor();
  const wide = await v.page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
  assert.ok(wide <= 0, `narrow: the page is ${wide} px wider than the window`);
  await shot(v.page, 'history-narrow-dark');
  await closeClean(v);
});

test('web: /diff?from=shift&to=rename lists exactly the scripted changes by crate, source side by side; "Public only" keeps the rename', { timeout: 180_000 }, async (t) => {
  if (!needBrowser(t)) return;
  const w = await open();
  const { page } = w;
  await page.goto(`${server!.url}/diff?from=shift&to=rename`);
  await page.getByRole('status').filter({ hasText: /2 changes/ }).waitFor();
  const summaries = async (): Promise<string[]> => (await page.locator('.change summary').allInnerTexts()).map((s) => s.replace(/\s+/g, ' ').trim()).sort();
  assert.deepEqual(await summaries(), ['body fn tally_cli::main', 'renamed fn tally::tally_text → tally::count_words breaking']);
  assert.deepEqual((await page.locator('section.crate-changes h2 .crate').allInnerTexts()).map((s) => s.replace(/\s+/g, ' ').trim()).sort(), ['tally-cli@0.1.0 in tally', 'tally@0.1.0 in tally']);
  const body = page.locator('.change').filter({ hasText: 'tally_cli::main' });
  await body.getByLabel('source of tally_cli::main before').locator('.del', { hasText: 'tally_text' }).first().waitFor();
  await body.getByLabel('source of tally_cli::main after').locator('.ins', { hasText: 'count_words' }).first().waitFor();
  const renamed = page.locator('.change').filter({ hasText: 'tally::count_words' });
  await renamed.getByLabel('signature of tally::count_words after').locator('.ins', { hasText: 'count_words' }).waitFor();
  await shot(page, 'diff-shift-rename');

  await page.getByLabel('Public only').check();
  await page.waitForURL(/\/diff\?from=shift&to=rename&public=1$/);
  await page.getByRole('status').filter({ hasText: /1 change of public items/ }).waitFor();
  assert.deepEqual(await summaries(), ['renamed fn tally::tally_text → tally::count_words breaking']);
  await closeClean(w);

  const v = await open({ width: 380 });
  await v.page.goto(`${server!.url}/diff?from=shift&to=rename`);
  await v.page.locator('.change .ins').first().waitFor();
  const wide = await v.page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
  assert.ok(wide <= 0, `narrow: the page is ${wide} px wider than the window`);
  await shot(v.page, 'diff-narrow');
  await closeClean(v);
});

test('web: as of a commit, /graph and /history read every answer at it and keep it in their links', { timeout: 180_000 }, async (t) => {
  if (!needBrowser(t)) return;
  const w = await open();
  const { page } = w;
  const asked: string[] = [];
  page.on('request', (r) => {
    if (r.url().includes('/api/')) asked.push(r.url());
  });
  await page.goto(`${server!.url}/graph/fnvish::hash_str?asOf=base`);
  const svg = page.getByRole('img', { name: 'call graph of fnvish::hash_str' });
  await svg.locator('g.box').first().waitFor();
  // before the rename: Tally::add's caller is still tally_text
  const callers2 = await svg.locator('g.box[data-level="-2"]').evaluateAll((gs) => gs.map((g) => g.getAttribute('data-label')));
  assert.ok(callers2.includes('tally::tally_text') && !callers2.includes('tally::count_words'), callers2.join(', '));
  await page.getByLabel('Levels each way').selectOption('3');
  await page.waitForURL(/\/graph\/fnvish::hash_str\?asOf=base&depth=3$/);
  await svg.locator('g.box').first().waitFor();
  await page.getByRole('link', { name: 'History' }).click();
  await page.waitForURL(/\/history\/fnvish::hash_str\?asOf=base$/);
  await page.getByRole('list', { name: 'events of fnvish::hash_str' }).locator('.entry').first().waitFor();
  assert.ok(asked.length >= 5, asked.join('\n'));
  assert.deepEqual(asked.filter((u) => new URL(u).searchParams.get('asOf') !== 'base'), [], 'every API call carries asOf');
  await page.goto(`${server!.url}/history/tally_cli::main?asOf=base`);
  const entries = page.getByRole('list', { name: 'events of tally_cli::main' }).locator(':scope > li');
  await entries.first().waitFor();
  assert.equal(await entries.count(), 1, 'as of base: only its add');
  await closeClean(w);
});

test('web: an unknown path on /graph is a page with did-you-mean links to the graph', { timeout: 120_000 }, async (t) => {
  if (!needBrowser(t)) return;
  const w = await open();
  const { page } = w;
  await page.goto(`${server!.url}/graph/fnvish::hash_st?depth=3`);
  await page.getByRole('heading', { name: 'No item has this path' }).waitFor();
  const link = page.getByRole('alert').getByRole('link', { name: 'fnvish::hash_str' });
  assert.equal(await link.getAttribute('href'), '/graph/fnvish::hash_str?depth=3');
  await shot(page, 'graph-unknown-path');
  await link.click();
  await page.getByRole('img', { name: 'call graph of fnvish::hash_str' }).waitFor();
  await closeClean(w, [/Failed to load resource: the server responded with a status of 404 .*\/api\/def\?path=fnvish%3A%3Ahash_st\)$/]);
});
