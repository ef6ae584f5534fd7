// `mimir serve` never reads a file outside the lake it serves (issue 10): a
// lake whose tables' current metadata files were rewritten to be those of
// another lake elsewhere (so they name manifest lists, manifests and data
// files outside) is served by a real `mimir serve` process; every question
// gets a JSON error naming the refused path, never the outside lake's rows —
// while an unconfined reader (the CLI) of the same crafted lake does answer
// from the outside files, so the refusal is what keeps them out.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { scratch } from '../helpers.ts';
import { Lake } from '../../src/lake/lake.ts';
import { identToString } from '../../src/lake/catalog/sql-catalog.ts';
import { sampleLake, node } from '../query/sample.ts';
import { runCli } from '../cli/run-cli.ts';
import { request, serveProcess, type Serving } from './http.ts';

const work = scratch('mimir-serve-confine-');
after(work.cleanup);

/** Start `mimir serve --port 0` on `lake` and wait for its URL line. */
const serve = (lake: string): Promise<Serving> => serveProcess([], { MIMIR_LAKE: lake });

/** Every table's current metadata file, as a local path. */
function currentMetadata(root: string): Map<string, string> {
  const lake = Lake.open(root, { create: false, readOnly: true });
  try {
    const out = new Map<string, string>();
    for (const ident of lake.catalog.listAllTables()) out.set(identToString(ident), lake.io.local(lake.catalog.loadTable(ident)!.metadataLocation));
    return out;
  } finally {
    lake.close();
  }
}

test('serve: a table whose metadata names files outside the lake gets an error naming them, never their contents', { timeout: 300_000 }, async () => {
  const served = path.join(work.dir, 'served');
  const outside = path.join(work.dir, 'outside');
  (await sampleLake(served)).log.close();
  const o = (await sampleLake(outside)).log;
  await o.append('node', [node('alpha', 'alpha@0.1.0', 'a-secret', 'alpha::secret_outside', { file: 'src/secret.rs', line: 77 })]);
  o.close();

  // the crafted lake: each current metadata file of `served` now holds the outside table's metadata
  const mine = currentMetadata(served);
  const theirs = currentMetadata(outside);
  assert.deepEqual([...mine.keys()].sort(), [...theirs.keys()].sort());
  for (const [t, file] of mine) writeFileSync(file, readFileSync(theirs.get(t)!));

  // an unconfined reader follows the metadata out of the lake and finds the secret
  const cli = await runCli(['find', 'secret_outside'], { lake: served });
  assert.equal(cli.code, 0, cli.stderr);
  assert.match(cli.stdout, /alpha::secret_outside .*src\/secret\.rs:77/, 'the crafted lake does lead out of the lake');

  const s = await serve(served);
  try {
    for (const target of ['/api/find?name=secret_outside', '/api/def?path=alpha::secret_outside', '/api/callers?path=regex::Regex::new', '/api/history?path=alpha::secret_outside']) {
      const r = await request(s.url, target);
      assert.equal(r.status, 500, `${target}: ${r.text}`);
      const body = JSON.parse(r.text) as { error: string; status: number };
      assert.match(body.error, new RegExp(`refusing to read file://${outside}/mimir/\\S+ \\(\\S+\\): it is outside the lake root ${served}, .* — nothing read`), target);
      assert.doesNotMatch(r.text, /src\/secret\.rs|"line"|"qpath"/, `${target}: nothing of the outside lake's rows`);
    }
  } finally {
    s.child.kill('SIGTERM');
  }
  assert.equal(await s.exit, 0);
});
