// The questions' wire form (src/serve/questions.ts): every question survives
// questionParams -> parseQuestion unchanged, its cache key ignores the order
// of parameters, and the edge kinds it accepts are exactly src/query's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EDGE_KINDS as QUERY_EDGE_KINDS } from '../../src/query/index.ts';
import { BadQuestion, EDGE_KINDS, parseQuestion, questionKey, questionParams, type Question } from '../../src/serve/questions.ts';

test('questions: the edge kinds a question may name are src/query\'s', () => {
  assert.deepEqual([...EDGE_KINDS], [...QUERY_EDGE_KINDS]);
});

test('questions: each question reads back equal from its parameters; keys ignore parameter order', () => {
  const qs: Question[] = [
    { q: 'find', name: 'new*', kind: 'fn', repo: '@universe', krate: 'regex@1.10.0', exact: true, asOf: { generation: 12n } },
    { q: 'find', name: 'x' },
    { q: 'def', path: 'regex::Regex::new', asOf: { time: new Date('2024-05-01T12:00:00.123Z') } },
    { q: 'refs', path: 'a::b', kind: 'uses' },
    { q: 'callers', path: 'a::b', asOf: { generation: 9007199254740993n } },
    { q: 'callees', path: 'a::b' },
    { q: 'history', path: 'a::b' },
    { q: 'diff', from: 3n, to: 9n, repo: 'alpha' },
  ];
  for (const q of qs) {
    const params = questionParams(q);
    assert.deepEqual(parseQuestion(q.q, params), q);
    assert.equal(questionKey(parseQuestion(q.q, [...params].reverse())), questionKey(q));
  }
  assert.notEqual(questionKey({ q: 'def', path: 'a' }), questionKey({ q: 'def', path: 'a', asOf: { generation: 1n } }));
  assert.throws(() => parseQuestion('def', [['path', 'a'], ['asOf', '2024-13-45']]), BadQuestion);
});
