// find's globs in linear time (src/query/glob.ts): the matcher agrees with
// the obvious definition on many small cases, `?` takes one code point, and a
// glob of many stars — which a backtracking RegExp takes exponential time on
// (7 stars: 11 s, 40: forever) — answers at once, alone and through `find`
// on a real lake (test/query/sample.ts).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { scratch } from '../helpers.ts';
import { find, nameMatcher } from '../../src/query/index.ts';
import { answerFind } from '../../src/query/answer.ts';
import { node, sampleLake, type Sample } from './sample.ts';

const work = scratch('mimir-glob-');
let s: Sample;
/** A long name, as large lakes have many: a RegExp of 40 `.*` never finishes on it. */
const LONG = 'a_rather_long_function_name_that_goes_on_and_on_and_on';
before(async () => {
  s = await sampleLake(work.dir);
  await s.log.append('node', [node('alpha', 'alpha@0.1.0', 'a-long', `alpha::${LONG}`, { file: 'src/lib.rs', line: 40 })]);
});
after(() => {
  s?.log.close();
  work.cleanup();
});

const STARS = '*'.repeat(40);
/** The issue's own line: 100 ms. The matching measured here takes well under 1 ms, so this holds at load 16. */
const LIMIT_MS = 100;

/** The definition, by dynamic programming over (glob prefix, value prefix), by code points. */
function reference(glob: string, value: string): boolean {
  const g = [...glob];
  const v = [...value];
  let row = [true, ...v.map(() => false)];
  for (const c of g) {
    const next = [c === '*' && row[0]!];
    for (let j = 1; j <= v.length; j++) next[j] = c === '*' ? row[j]! || next[j - 1]! : row[j - 1]! && (c === '?' || c === v[j - 1]);
    row = next;
  }
  return row[v.length]!;
}

test('glob: the matcher agrees with the definition on every glob and value over a small alphabet', () => {
  const match = (glob: string, value: string): boolean => nameMatcher(glob).test(value);
  // every glob of up to 4 characters from `ab*?` (with at least one * or ?) against every value of up to 5 from `ab`
  const words = (alphabet: string, n: number): string[] => (n === 0 ? [''] : [...words(alphabet, n - 1), ...words(alphabet, n - 1).filter((w) => w.length === n - 1).flatMap((w) => [...alphabet].map((c) => w + c))]);
  const globs = words('ab*?', 4).filter((g) => /[*?]/.test(g));
  const values = words('ab', 5);
  let checked = 0;
  for (const g of globs) for (const v of values) {
    assert.equal(match(g, v), reference(g, v), `glob ${g} on "${v}"`);
    checked++;
  }
  assert.ok(checked > 10_000, `${checked} cases`);
  assert.equal(match('?', '😀'), true, '? is one code point, not one UTF-16 unit');
  assert.equal(match('a?b', 'a😀b'), true);
  assert.equal(match('*😀', 'xx😀'), true);
  assert.equal(match('??', '😀'), false);
  assert.equal(match('*', ''), true);
  assert.equal(match('Regex*', 'RegexSet'), true);
  assert.equal(match('Regex*', 'regexSet'), false, 'case-sensitive');
  assert.equal(match('*.rs', 'a.rs'), true, 'a dot is itself');
  assert.equal(match('(*', '(x'), true, 'regex characters are themselves');
});

test(`glob: ${STARS.length} stars and a literal match in linear time, hit or miss (the issue's ${LIMIT_MS} ms)`, () => {
  const values = ['a'.repeat(60), `${'Q'.repeat(3)}x`.repeat(15), `${'b'.repeat(50)}QQQQ`, 'RegexSetBuilder'];
  for (const glob of [`${STARS}QQQQ`, `${STARS}Q${STARS}Q?${STARS}`, `?${STARS}a${STARS}`]) {
    const m = nameMatcher(glob);
    const t0 = performance.now();
    const got = values.map((v) => m.test(v));
    const ms = performance.now() - t0;
    assert.deepEqual(got, values.map((v) => reference(glob, v)), glob);
    assert.ok(ms < LIMIT_MS, `${glob.length}-character glob took ${ms.toFixed(1)} ms on ${values.length} names`);
  }
});

test(`find: ${STARS.length} stars and a literal on a real lake answer (none for QQQQ, the matching items for eck), matching in under ${LIMIT_MS} ms`, async () => {
  const none = await find(s.log, `${STARS}QQQQ`);
  assert.deepEqual(none.hits, []);
  const hit = await find(s.log, `${STARS}eck`);
  assert.deepEqual(hit.hits.map((h) => h.qpath), ['beta::util::check']);
  await assert.rejects(answerFind(s.log, `${STARS}QQQQ`), /no item matches "\*{40}QQQQ"|no such item/);
  assert.deepEqual((await find(s.log, `a${STARS}on`)).hits.map((h) => h.qpath), [`alpha::${LONG}`]);
  const pathHit = await find(s.log, `${STARS}::${STARS}new`);
  assert.deepEqual(pathHit.hits.map((h) => h.qpath), ['regex::regex::string::Regex::new']);
  // the matching itself, over every name the lake has (the reads above are not the question)
  const names = (await find(s.log, '*')).hits.map((h) => h.name ?? '');
  assert.ok(names.length >= 5, `${names.length} names`);
  assert.ok(names.includes(LONG));
  for (const glob of [`${STARS}QQQQ`, `${STARS}eck`, `a${STARS}on`]) {
    const m = nameMatcher(glob);
    const t0 = performance.now();
    for (let i = 0; i < 100; i++) for (const n of names) m.test(n);
    const ms = (performance.now() - t0) / 100;
    assert.ok(ms < LIMIT_MS, `${glob}: ${ms.toFixed(2)} ms to match ${names.length} names`);
  }
});
