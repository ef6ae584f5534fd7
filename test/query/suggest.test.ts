// Names for people: did-you-mean picks the close names (typos, swaps, case),
// says nothing for far ones; fuzzy find ranks exact, prefix, camel humps and
// word starts above scattered matches and drops non-matches.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { didYouMean, didYouMeanText, editDistance, fuzzyRank, fuzzyScore } from '../../src/query/suggest.ts';

test('suggest: edit distance counts inserts, deletes, substitutions and swaps, and stops past its bound', () => {
  assert.equal(editDistance('struct', 'struct'), 0);
  assert.equal(editDistance('strcut', 'struct'), 1); // a swap
  assert.equal(editDistance('Searchr', 'Searcher'), 1);
  assert.equal(editDistance('kitten', 'sitting'), 3);
  assert.equal(editDistance('abc', 'xyzxyz', 2), 3);
});

test('suggest: did you mean lists the closest known names, case-insensitive, and nothing for far ones', () => {
  const kinds = ['module', 'fn', 'method', 'struct', 'enum', 'variant', 'union', 'trait', 'impl', 'const', 'static', 'type', 'macro'];
  assert.deepEqual(didYouMean('strcut', kinds), ['struct']);
  assert.deepEqual(didYouMean('Trait', kinds), ['trait']);
  assert.deepEqual(didYouMean('grep_searcher::Searchr', ['grep_searcher::Searcher', 'grep_searcher::Sink', 'grep_regex::RegexMatcher']), ['grep_searcher::Searcher']);
  assert.deepEqual(didYouMean('zzzzzz', kinds), []);
  assert.equal(didYouMeanText('nosuch', ['ripgrep', 'sample']), '');
  assert.equal(didYouMeanText('sampel', ['ripgrep', 'sample']), 'did you mean sample?');
});

test('suggest: fuzzy find ranks exact, then prefix, then camel humps and word starts, and drops names missing a letter', () => {
  assert.equal(fuzzyScore('xyz', 'Regex'), null);
  const names = ['RegexBuilder', 'Regex', 'regex_set_builder', 'RegexSetBuilder', 'ReaderExt', 'rgx'];
  assert.deepEqual(fuzzyRank('Regex', names, (n) => n), ['Regex', 'RegexBuilder', 'RegexSetBuilder', 'regex_set_builder']);
  const rsb = fuzzyRank('RSB', names, (n) => n);
  assert.equal(rsb[0], 'RegexSetBuilder', `camel humps first: ${rsb.join(', ')}`);
  assert.ok(!rsb.includes('Regex'));
  const rsb2 = fuzzyRank('rsb', names, (n) => n);
  assert.deepEqual(rsb2.slice(0, 2).sort(), ['RegexSetBuilder', 'regex_set_builder']);
  assert.deepEqual(fuzzyRank('Rgx', names, (n) => n, 1), ['rgx']);
});
