// A lake inside the folder given to --lake, with real `mimir` processes: with
// a lake at P/r0 and none at P, `--lake P ingest` and `--lake P init` refuse
// naming P/r0 (never a recover at P), and `lake recover --lake P` registers
// nothing of P/r0 (it is a lake of its own) and writes no catalog at P. And a
// catalog at P that already claims P/r0's tables (what recover did before it
// knew better, simulated with the catalog API): `init` and `gc --retain 0` at
// P leave every file under P/r0 as it was — also the files P/r0 wrote after
// that claim, which P's catalog never saw — and P/r0 answers as before, its
// `lake check` clean.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { repoRoot, scratch } from '../helpers.ts';
import { runCli, type CliResult } from './run-cli.ts';
import { digests } from './digests.ts';
import { SqlCatalog, type TableChange } from '../../src/lake/catalog/sql-catalog.ts';

const work = scratch('mimir-cli-nested-');
after(work.cleanup);
const ok = (r: CliResult, what: string): CliResult => {
  assert.equal(r.code, 0, `${what}: exit ${r.code}: ${r.stderr}`);
  return r;
};
const sample = path.join(repoRoot, 'samples', 'workspace');
const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

test('nested lake: commands at the outer folder name the inner lake, recover and gc there never claim its files', async () => {
  const P = path.join(work.dir, 'P');
  const inner = path.join(P, 'r0');
  mkdirSync(P);
  ok(await runCli(['ingest', sample, '--repo', 'sample', '--with-deps'], { lake: inner }), 'ingest into P/r0');
  const answer = ok(await runCli(['callers', 'fnvish::hash_str'], { lake: inner }), 'callers').stdout;
  assert.ok(answer.trim() !== '', 'the inner lake answers');
  const untouched = digests(inner);

  // the outer folder is not a lake: hints name P/r0, never a recover at P
  for (const args of [['ingest', sample, '--repo', 'sample'], ['init']]) {
    const r = await runCli(args, { lake: P });
    assert.equal(r.code, 1, `${args[0]} at P refuses: ${r.stderr}`);
    assert.match(r.stderr, new RegExp(`${escape(inner)}\\b`), `${args[0]}: names the inner lake`);
    assert.doesNotMatch(r.stderr, new RegExp(`lake recover --lake ${escape(P)}'`), `${args[0]}: suggests no recover at P`);
    assert.ok(!existsSync(path.join(P, 'catalog.db')), `${args[0]} created no catalog at P`);
  }
  const rec = await runCli(['lake', 'recover'], { lake: P });
  assert.equal(rec.code, 1, `recover at P has nothing of its own to recover: ${rec.stdout}${rec.stderr}`);
  assert.match(rec.stderr, new RegExp(`${escape(inner)}.*a lake of its own`), rec.stderr);
  assert.doesNotMatch(rec.stdout, /registered/);
  assert.ok(!existsSync(path.join(P, 'catalog.db')), 'recover wrote no catalog at P');
  assert.deepEqual(digests(inner), untouched, 'nothing under P/r0 changed');

  // a catalog at P that claims the inner lake's tables, as an older recover made it
  const innerCat = SqlCatalog.open(inner, { readOnly: true });
  const claims: TableChange[] = innerCat.listAllTables().map((ident) => ({
    ident: { namespace: ['r0', ...ident.namespace], name: ident.name },
    expected: null,
    next: innerCat.loadTable(ident)!.metadataLocation,
  }));
  innerCat.close();
  assert.ok(claims.length >= 14, `${claims.length} tables in the inner lake`);
  const outerCat = SqlCatalog.open(P, { create: true });
  for (const c of claims) if (!outerCat.namespaceExists(c.ident.namespace)) outerCat.createNamespace(c.ident.namespace);
  outerCat.commit(claims, 'what an older lake recover at P did');
  outerCat.close();

  // the inner lake moves on: files P's catalog never saw
  ok(await runCli(['ingest', sample, '--repo', 'other'], { lake: inner }), 'a second ingest into P/r0');
  const answer2 = ok(await runCli(['callers', 'fnvish::hash_str'], { lake: inner }), 'callers').stdout;
  const innerFiles = digests(inner);

  ok(await runCli(['init'], { lake: P }), 'init at P');
  const gc = ok(await runCli(['gc', '--retain', '0'], { lake: P }), 'gc at P');
  assert.match(gc.stdout, new RegExp(`skipped .*r0\\.mimir\\.`), gc.stdout);
  assert.deepEqual(digests(inner), innerFiles, 'init and gc at P changed, deleted or added nothing under P/r0');
  assert.equal(ok(await runCli(['callers', 'fnvish::hash_str'], { lake: inner }), 'callers after').stdout, answer2, 'same answer');
  ok(await runCli(['lake', 'check'], { lake: inner }), 'lake check at P/r0');
});
