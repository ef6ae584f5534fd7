// Git-native reading: a TreeMirror holds exactly the tree of each commit it is
// asked for (files added, changed, deleted, a file turned into a folder and
// back, names with spaces and non-ASCII letters), the user's work tree and
// HEAD are untouched, and ranges list first-parent commits oldest first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { TreeMirror, commitInfo, commitsOf, gitTop, refsAt, revParse } from '../../src/ingest/git.ts';
import { scratch } from '../helpers.ts';

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, encoding: 'utf8' }).trim();

/** Every regular file under `dir`, relative path -> content. */
function tree(dir: string, skip = new Set(['.git'])): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string, rel: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (skip.has(e.name)) continue;
      const p = path.join(d, e.name);
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(p, r);
      else if (e.isFile()) out.set(r, readFileSync(p, 'utf8'));
    }
  };
  walk(dir, '');
  return out;
}

function commit(repo: string, files: Record<string, string | null>, subject: string): string {
  for (const [p, content] of Object.entries(files)) {
    const abs = path.join(repo, p);
    if (content === null) rmSync(abs, { recursive: true, force: true });
    else {
      mkdirSync(path.dirname(abs), { recursive: true });
      rmSync(abs, { recursive: true, force: true }); // a folder becoming a file
      writeFileSync(abs, content);
    }
  }
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', subject);
  return git(repo, 'rev-parse', 'HEAD');
}

test('git: a mirror holds exactly each commit\'s tree, walking a range oldest first; the work tree is untouched', async () => {
  const s = scratch('mimir-git-');
  try {
    const repo = path.join(s.dir, 'repo');
    mkdirSync(repo);
    git(repo, 'init', '-q', '-b', 'main');
    const c1 = commit(repo, { 'Cargo.toml': '[package]\nname = "a"\n', 'src/lib.rs': 'pub fn a() {}\n', 'x': 'file' }, 'first');
    const c2 = commit(repo, { 'src/lib.rs': 'pub fn a() { b() }\n', 'src/b dir/ü.rs': 'fn b() {}\n', 'x': null, 'x/inner.rs': 'dir now' }, 'second: edit, add, file to folder');
    git(repo, 'tag', 'v2');
    const c3 = commit(repo, { 'src/b dir/ü.rs': null, 'x/inner.rs': null, 'x': 'file again' }, 'third: delete, folder to file');
    const snapshots = new Map<string, Map<string, string>>();
    for (const c of [c1, c2, c3]) {
      git(repo, 'checkout', '-q', c);
      snapshots.set(c, tree(repo));
    }
    git(repo, 'checkout', '-q', 'main');
    // the user's work tree gets an uncommitted edit that must survive
    writeFileSync(path.join(repo, 'src/lib.rs'), 'uncommitted\n');
    const head = git(repo, 'rev-parse', 'HEAD');

    assert.deepEqual(await commitsOf(repo, `${c1}..${c3}`), [c2, c3]);
    assert.deepEqual(await commitsOf(repo, 'v2'), [c2]);
    assert.equal(await revParse(repo, c2.slice(0, 8)), c2);
    await assert.rejects(commitsOf(repo, `${c3}..${c1}`), /holds no commit/);
    await assert.rejects(commitsOf(repo, 'nosuch'), /names no commit/);
    assert.deepEqual(await refsAt(repo, c2), ['v2']);
    const info = await commitInfo(repo, c2);
    assert.equal(info.subject, 'second: edit, add, file to folder');
    assert.ok(info.timeMs > 0);

    const m = await TreeMirror.open(repo);
    try {
      for (const c of [c1, c2, c3, c1, c3]) {
        await m.checkout(c);
        assert.deepEqual(tree(m.dir), snapshots.get(c), `mirror at ${c}`);
      }
      const r = await m.checkout(c3);
      assert.equal(r.written + r.deleted, 0, 'the same commit again writes nothing');
    } finally {
      await m.close();
    }
    assert.throws(() => statSync(m.dir), /ENOENT/);
    assert.equal(readFileSync(path.join(repo, 'src/lib.rs'), 'utf8'), 'uncommitted\n');
    assert.equal(git(repo, 'rev-parse', 'HEAD'), head);

    const sub = path.join(repo, 'src');
    assert.deepEqual(await gitTop(sub), { top: repo, prefix: 'src' });
  } finally {
    s.cleanup();
  }
});
