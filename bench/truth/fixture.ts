// Regenerates the test fixtures of the truth bench from the small crate in
// test/fixtures/truth/crate (written for the tests): its rustdoc JSON, trimmed
// to the crate's own items and the `paths` entries they refer to (docs
// dropped), and its MIR text. Needs the nightly toolchain; the tests do not.
//   node --import tsx bench/truth/fixture.ts
import { mkdtempSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { buildOracle, nightlyToolchain, oraclePaths, type CrateDir } from './oracle.ts';

const here = path.dirname(new URL(import.meta.url).pathname);
const out = path.resolve(here, '..', '..', 'test', 'fixtures', 'truth');
const crate: CrateDir = { name: 'truthfix', version: '0.1.0', dirName: 'truthfix-0.1.0', dir: path.join(out, 'crate') };
const cache = mkdtempSync(path.join(tmpdir(), 'truth-fixture-'));
try {
  const toolchain = nightlyToolchain();
  const s = await buildOracle(cache, toolchain, crate, { log: (m) => console.error(m) });
  if (!s.ok) throw new Error(`the fixture crate did not build: ${s.error}`);
  const p = oraclePaths(cache, toolchain, crate);
  const raw = JSON.parse(gunzipSync(await readFile(p.rustdoc)).toString('utf8')) as Record<string, unknown>;
  const index = raw['index'] as Record<string, Record<string, unknown>>;
  const paths = raw['paths'] as Record<string, Record<string, unknown>>;
  const keep: Record<string, unknown> = {};
  const referenced = new Set<string>();
  for (const [id, it] of Object.entries(index)) {
    if (it['crate_id'] !== 0) continue;
    keep[id] = { ...it, docs: null };
    // ids of other crates' items this one points at (trait of an impl, type of a field …)
    JSON.stringify(it['inner'], (k, v) => { if (k === 'id' && typeof v === 'number') referenced.add(String(v)); return v as unknown; });
  }
  const keptPaths: Record<string, unknown> = {};
  for (const [id, pth] of Object.entries(paths)) if (pth['crate_id'] === 0 || referenced.has(id)) keptPaths[id] = pth;
  const trimmed = { ...raw, index: keep, paths: keptPaths, external_crates: {} };
  await writeFile(path.join(out, 'truthfix.rustdoc.json'), JSON.stringify(trimmed));
  await writeFile(path.join(out, 'truthfix.mir'), gunzipSync(await readFile(p.mir)));
  console.log(`wrote ${path.join(out, 'truthfix.rustdoc.json')} and truthfix.mir (${toolchain})`);
} finally {
  await rm(cache, { recursive: true, force: true });
}
