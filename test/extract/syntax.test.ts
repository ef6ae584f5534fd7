import { test } from 'node:test';
import assert from 'node:assert/strict';
import { collapse } from '../../src/extract/syntax.ts';

test('collapse: every whitespace run becomes one space and the ends are trimmed, with or without the fast path', () => {
  const cases = [
    '', ' ', 'fn f()', ' fn f() ', 'pub fn f(a: u8)', 'pub  fn f()', 'pub\tfn', 'pub\nfn f(\n    a: u8,\n)', 'a \n b',
    'a\u00a0b', 'a \u00a0b', 'a\u2028b', '\ufeffa', 'a\r\nb', 'a   ', '  a', 'where T: Clone,\n      U: Copy',
  ];
  for (const s of cases) assert.equal(collapse(s), s.replace(/\s+/g, ' ').trim(), JSON.stringify(s));
});
