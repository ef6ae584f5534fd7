// Real crates: Debian's librust-*-dev sources under /usr/share/cargo/registry
// (scripts/install-debian-crates.sh installs them). A handful go into the
// universe; every one ingests; public items are found where they are defined
// (file and line checked against the source text); a rerun writes nothing.
// Skips with a message when the crates are not installed.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { and, eq } from '../../src/lake/expr/expr.ts';
import { formatIngestReport, universeAdd } from '../../src/ingest/index.ts';
import { UNIVERSE_REPO } from '../../src/log/schema.ts';
import { freshLake } from './helpers.ts';
import { def as defQuery } from '../../src/query/index.ts';

const REGISTRY = '/usr/share/cargo/registry';
const CRATES = ['regex-1.7.1', 'regex-syntax-0.6.27', 'aho-corasick-0.7.19', 'memchr-2.5.0', 'serde-1.0.152', 'syn-1.0.107', 'proc-macro2-1.0.47', 'quote-1.0.21'];
const missing = CRATES.filter((c) => !existsSync(path.join(REGISTRY, c, 'Cargo.toml')));
const skip = missing.length > 0
  ? `skipped: ${missing.join(', ')} not under ${REGISTRY}; run scripts/install-debian-crates.sh (root, apt) to install them`
  : false;

/**
 * Public paths asked for, the path where the item is defined (the node's
 * qpath: ids follow definitions, re-exports are `uses` edges), the file, and
 * the text its definition line starts with (the line is looked up in the source).
 */
const LOOKUPS = [
  { public: 'regex::Regex::new', krate: 'regex@1.7.1', qpath: 'regex::re_unicode::Regex::new', file: 'src/re_unicode.rs', text: '    pub fn new(re: &str) -> Result<Regex, Error> {', reexport: 'regex::re_unicode::Regex' },
  { public: 'serde::Serialize', krate: 'serde@1.0.152', qpath: 'serde::ser::Serialize', file: 'src/ser/mod.rs', text: 'pub trait Serialize {', reexport: 'serde::ser::Serialize' },
  { public: 'serde::de::Deserializer', krate: 'serde@1.0.152', qpath: 'serde::de::Deserializer', file: 'src/de/mod.rs', text: "pub trait Deserializer<'de>: Sized {", reexport: null },
  { public: 'syn::parse::Parse', krate: 'syn@1.0.107', qpath: 'syn::parse::Parse', file: 'src/parse.rs', text: 'pub trait Parse: Sized {', reexport: null },
];

const cleanups: (() => void)[] = [];
after(() => { for (const c of cleanups) c(); });

test('real Debian crates: every crate ingests, def lookups find file and line, a rerun writes nothing', { skip }, async () => {
  const lake = await freshLake();
  cleanups.push(lake.cleanup);
  const { log } = lake;
  const r = await universeAdd(log, CRATES.map((c) => path.join(REGISTRY, c)));
  assert.equal(r.crates, CRATES.length, formatIngestReport(r));
  assert.ok(!r.problems.some((p) => p.kind === 'extract-failed'), JSON.stringify(r.problems));
  const files = await log.state('file', eq('repo', UNIVERSE_REPO));
  const krates = new Set([...files.values()].map((f) => f['krate']));
  for (const c of CRATES) {
    const m = /^(.+)-(\d+\.\d+\.\d+)$/.exec(c)!;
    assert.ok(krates.has(`${m[1]}@${m[2]}`), `${c} has file rows`);
  }

  for (const l of LOOKUPS) {
    const defs = await log.state('node', and(eq('repo', UNIVERSE_REPO), eq('qpath', l.qpath)));
    assert.equal(defs.size, 1, `${l.public}: one node with qpath ${l.qpath}`);
    const [id, def] = [...defs][0]!;
    assert.equal(def['krate'], l.krate);
    assert.equal(def['file'], l.file);
    const lines = readFileSync(path.join(REGISTRY, l.krate.replace('@', '-'), l.file), 'utf8').split('\n');
    const want = lines.findIndex((t) => t.startsWith(l.text)) + 1;
    assert.ok(want > 0, `${l.text} found in ${l.file}`);
    assert.equal(def['line_start'], want, `${l.public} line`);
    // and the question a person asks: `mimir def <public path>` answers with the definition
    const answer = await defQuery(log, l.public);
    assert.ok(
      answer.hits.some((h) => h.qpath === l.qpath && h.file === l.file && h.line === want),
      `def ${l.public} (${answer.match}) -> ${answer.hits.map((h) => `${h.qpath} ${h.file}:${h.line}`).join(', ') || 'nothing'}`,
    );
    if (l.public !== l.qpath) {
      // a re-export: the public path is no node, and the crate root's `pub use` points at the definition
      assert.equal((await log.state('node', and(eq('repo', UNIVERSE_REPO), eq('qpath', l.public)))).size, 0);
      const typeNode = l.reexport === l.qpath ? id : [...(await log.state('node', and(eq('repo', UNIVERSE_REPO), eq('qpath', l.reexport!)))).keys()][0];
      const uses = await log.rows('edge', { filter: and(eq('dst', typeNode!), eq('edge_kind', 'uses')) });
      assert.ok(uses.length >= 1, `a uses edge re-exports ${l.reexport}`);
    }
  }

  const g = log.lake.catalog.pointerGeneration();
  const again = await universeAdd(log, CRATES.map((c) => path.join(REGISTRY, c)));
  assert.equal(again.presentCrates, CRATES.length);
  assert.deepEqual(again.events, { add: 0, change: 0, remove: 0 });
  assert.equal(log.lake.catalog.pointerGeneration(), g + 1n, 'only the run row');
});
