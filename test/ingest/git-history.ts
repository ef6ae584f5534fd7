// A git repository with a scripted history, built from the sample workspace
// (samples/workspace: crates tally and tally-cli, the dependency fnvish
// vendored) for the tests of git-native ingest, positions, `--as-of` a commit
// and the semantic diff. Each step is one commit, tagged with its name, and
// changes exactly what `STEPS` says (the diff tests hold it to that):
//
//   base       the sample workspace as it is
//   shift      six comment lines at the top of tally/src/lib.rs (a line shift: no semantic change)
//   rename     tally::tally_text -> tally::count_words (same body but for its name), its one caller updated
//   move       `impl Tally` from lib.rs into a new private module file src/ops.rs (the methods keep their paths)
//   signature  Tally::add returns &mut Self (its body follows)
//   body       Tally::new keeps at least 2 buckets
//   visibility Bucket::count becomes pub(crate)
//   bump       fnvish 0.2.1 -> 0.2.2 (vendored, Cargo.lock): hash_bytes' body changes, hash_u64 is added
//   test       an integration test tests/words.rs in tally
//
// Commits have fixed author/committer times (one minute apart), so the ids
// are the same on every run. Nothing here touches the lake.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { repoRoot } from '../helpers.ts';

export const STEPS = ['base', 'shift', 'rename', 'move', 'signature', 'body', 'visibility', 'bump', 'test'] as const;
export type Step = (typeof STEPS)[number];

export interface GitHistory {
  /** The repository's folder (named `tally`, so its repo name in the lake is `tally`). */
  dir: string;
  /** Each step's commit id. */
  sha: Record<Step, string>;
}

/** `git` in `cwd` with a fixed identity (and `date` for commits). */
export function git(cwd: string, args: string[], date?: string): string {
  const env = date ? { ...process.env, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date } : process.env;
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', '-c', 'tag.gpgsign=false', ...args], { cwd, encoding: 'utf8', env }).trim();
}

/** Replace `from` (which must occur once) by `to` in `file`. */
function edit(file: string, from: string, to: string): void {
  const text = readFileSync(file, 'utf8');
  const at = text.indexOf(from);
  if (at < 0 || text.indexOf(from, at + 1) >= 0) throw new Error(`git-history: ${file} holds ${at < 0 ? 'no' : 'more than one'} ${JSON.stringify(from)}`);
  writeFileSync(file, text.slice(0, at) + to + text.slice(at + from.length));
}

/** Build the scripted history in `parent/tally` (see the module) and return its commits. */
export function buildGitHistory(parent: string): GitHistory {
  const dir = path.join(parent, 'tally');
  cpSync(path.join(repoRoot, 'samples', 'workspace'), dir, { recursive: true });
  const lib = path.join(dir, 'crates', 'tally', 'src', 'lib.rs');
  const bucket = path.join(dir, 'crates', 'tally', 'src', 'bucket.rs');
  const main = path.join(dir, 'crates', 'tally-cli', 'src', 'main.rs');
  git(dir, ['init', '-q', '-b', 'main']);
  const sha = {} as Record<Step, string>;
  let minute = 0;
  const commit = (step: Step): void => {
    const date = `2024-05-01T12:${String(minute++).padStart(2, '0')}:00Z`;
    git(dir, ['add', '-A']);
    git(dir, ['commit', '-q', '-m', step], date);
    git(dir, ['tag', step]);
    sha[step] = git(dir, ['rev-parse', 'HEAD']);
  };
  commit('base');

  edit(lib, '//! Word counts in a fixed number of buckets.\n', '// Copyright the tally authors.\n//\n// Licensed under the terms in LICENSE.\n//\n// (This header moves every line below it.)\n\n//! Word counts in a fixed number of buckets.\n');
  commit('shift');

  edit(lib, 'pub fn tally_text(', 'pub fn count_words(');
  edit(main, 'use tally::tally_text;', 'use tally::count_words;');
  edit(main, 'let t = tally_text(&text, 16);', 'let t = count_words(&text, 16);');
  commit('rename');

  const text = readFileSync(lib, 'utf8');
  const start = text.indexOf('impl Tally {');
  const end = text.indexOf('\n}\n', start) + 3;
  const block = text.slice(start, end);
  writeFileSync(lib, text.slice(0, start) + text.slice(end).replace(/^\n/, ''));
  edit(lib, 'pub mod bucket;\n', 'pub mod bucket;\nmod ops;\n');
  writeFileSync(path.join(dir, 'crates', 'tally', 'src', 'ops.rs'), `//! What a tally does.\nuse crate::bucket::Bucket;\nuse crate::Tally;\nuse fnvish::hash_str;\n\n${block}`);
  edit(lib, 'use bucket::Bucket;\nuse fnvish::hash_str;\n', 'use bucket::Bucket;\n');
  commit('move');

  const ops = path.join(dir, 'crates', 'tally', 'src', 'ops.rs');
  edit(ops, '    pub fn add(&mut self, word: &str) {\n        let i = (hash_str(word) as usize) % self.buckets.len();\n        self.buckets[i].push(word);\n    }',
    '    pub fn add(&mut self, word: &str) -> &mut Self {\n        let i = (hash_str(word) as usize) % self.buckets.len();\n        self.buckets[i].push(word);\n        self\n    }');
  commit('signature');

  edit(ops, 'n.max(1)', 'n.max(2)');
  commit('body');

  edit(bucket, '    pub fn count(&self', '    pub(crate) fn count(&self');
  commit('visibility');

  const v1 = path.join(dir, 'vendor', 'fnvish-0.2.1');
  const v2 = path.join(dir, 'vendor', 'fnvish-0.2.2');
  cpSync(v1, v2, { recursive: true });
  edit(path.join(v2, 'Cargo.toml'), 'version = "0.2.1"', 'version = "0.2.2"');
  const fnv = path.join(v2, 'src', 'lib.rs');
  edit(fnv, '    for b in bytes {\n        h ^= u64::from(*b);\n        h = h.wrapping_mul(PRIME);\n    }\n    h\n',
    '    bytes.iter().fold(h, |h, b| (h ^ u64::from(*b)).wrapping_mul(PRIME))\n');
  edit(fnv, '    let mut h = OFFSET;\n', '    let h = OFFSET;\n');
  writeFileSync(fnv, readFileSync(fnv, 'utf8') + '\n/// Hash a number\'s little-endian bytes.\npub fn hash_u64(x: u64) -> u64 {\n    hash_bytes(&x.to_le_bytes())\n}\n');
  edit(path.join(dir, 'Cargo.lock'), 'name = "fnvish"\nversion = "0.2.1"', 'name = "fnvish"\nversion = "0.2.2"');
  commit('bump');

  mkdirSync(path.join(dir, 'crates', 'tally', 'tests'), { recursive: true });
  writeFileSync(path.join(dir, 'crates', 'tally', 'tests', 'words.rs'), 'use tally::count_words;\n\n#[test]\nfn counts_repeated_words() {\n    assert_eq!(count_words("a b a", 4).count("a"), 2);\n}\n');
  commit('test');
  return { dir, sha };
}
