// `npm run bench:ingest-vs`: this tree's bench:ingest against an earlier
// commit's, on the same machine and corpus, alternated in pairs (A B, B A, …)
// so that the host's drift falls on both alike.
//
// Why: issue 7 asks that ingest be no slower than before the resolution
// phase. A MB/s figure from another machine or another day does not compare
// (the same code measured 2.7 MB/s where the issue was written and 1.5–1.7
// MB/s on a later machine), and the two trees count different bytes: the
// reference follows every `mod` declaration, this tree only cfg-active ones
// (so it never reads Windows-only modules, `#[cfg(test)]` files or features
// that are off). Both ingest the same crate folders, so the figure that
// compares is the time of that ingest, and MB/s over one byte count for both:
// the reference's parsed bytes.
//
// The reference: `--against REV` (default REFERENCE below, the last commit
// before the resolution phase) is checked out into a temporary git worktree,
// its dependencies installed there with `npm ci` (from npm's cache when it
// has them), and its own `bench/ingest.ts` run through tsx (it predates the
// build). This tree runs its bench:ingest on the compiled build (built first
// when stale). Prints each run, then means, the time ratio and MB/s over the
// same bytes. Flags: --pairs N (default 3), --against REV, --keep (leave the
// worktree, for reruns: --ref-dir DIR reuses one). Skips with a message when
// the corpus or git is absent. Removes its worktree unless --keep.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

/** e93de62: the index issue landed, before issue 7's resolution phase (cfg, macros, names, method calls). */
const REFERENCE = 'e93de62';
const root = fileURLToPath(new URL('../', import.meta.url));
const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const pairs = Number(flag('--pairs') ?? 3);
const against = flag('--against') ?? REFERENCE;
const keep = args.includes('--keep');
const corpus = '/usr/share/cargo/registry';

if (!Number.isInteger(pairs) || pairs < 1) {
  console.error(`bench:ingest-vs: --pairs takes a whole number ≥ 1, found ${flag('--pairs')}`);
  process.exit(2);
}
if (!existsSync(corpus)) {
  console.log(`bench:ingest-vs skipped: no corpus at ${corpus}; run scripts/install-debian-crates.sh (as root, with apt) first`);
  process.exit(0);
}
const git = (...a: string[]) => execFileSync('git', ['-C', root, ...a], { encoding: 'utf8' }).trim();
let commit: string;
try {
  commit = git('rev-parse', '--verify', `${against}^{commit}`);
} catch {
  console.log(`bench:ingest-vs skipped: ${against} is not a commit of this repository (a shallow clone? fetch its history first)`);
  process.exit(0);
}

interface Run { s: number; mb: number; files: number; events: number; rssMb: number }

/** One bench:ingest process in `dir`; its figures, read from what it prints. */
function bench(dir: string): Run {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'bench/ingest.ts'], { cwd: dir, encoding: 'utf8', maxBuffer: 64 << 20 });
  const out = r.stdout ?? '';
  const source = /^source\s+([\d.]+) MB in (\d+) parsed files/m.exec(out);
  const e2e = /^end to end\s+([\d.]+) s, [\d.]+ MB\/s with \d+ worker thread\(s\), (\d+) events/m.exec(out);
  const rss = /^peak RSS\s+(\d+) MB/m.exec(out);
  if (r.status !== 0 || !source || !e2e || !rss) {
    throw new Error(`bench:ingest in ${dir} failed (exit ${r.status}):\n${out.slice(-2000)}\n${(r.stderr ?? '').slice(-2000)}`);
  }
  return { s: Number(e2e[1]), mb: Number(source[1]), files: Number(source[2]), events: Number(e2e[2]), rssMb: Number(rss[1]) };
}

const given = flag('--ref-dir');
const made = given === undefined;
const refDir = given ?? mkdtempSync(path.join(tmpdir(), 'mimir-ingest-vs-'));
try {
  if (made) {
    console.log(`reference     ${against} (${commit.slice(0, 12)}) into ${refDir}: git worktree, npm ci …`);
    git('worktree', 'add', '--detach', '--force', refDir, commit);
    const t0 = performance.now();
    const ci = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: refDir, encoding: 'utf8' });
    if (ci.status !== 0) throw new Error(`npm ci in ${refDir} failed:\n${(ci.stderr ?? '').slice(-2000)}`);
    console.log(`              installed in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  }
  const build = spawnSync('npm', ['run', '-s', 'build'], { cwd: root, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`npm run build failed:\n${(build.stderr ?? '').slice(-2000)}`);

  const ref: Run[] = [];
  const mine: Run[] = [];
  const show = (who: string, i: number, r: Run) =>
    console.log(`pair ${i + 1}  ${who.padEnd(9)} ${r.s.toFixed(2).padStart(6)} s  ${r.mb.toFixed(1)} MB in ${r.files} files  ${(r.mb / r.s).toFixed(2)} MB/s  ${r.events} events  peak RSS ${r.rssMb} MB`);
  for (let i = 0; i < pairs; i++) {
    // A B, then B A: neither tree always runs first
    const order: ['ref' | 'this', string][] = i % 2 === 0 ? [['ref', refDir], ['this', root]] : [['this', root], ['ref', refDir]];
    for (const [who, dir] of order) {
      const r = bench(dir);
      (who === 'ref' ? ref : mine).push(r);
      show(who === 'ref' ? 'reference' : 'this tree', i, r);
    }
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const refS = mean(ref.map((r) => r.s));
  const mineS = mean(mine.map((r) => r.s));
  const refMb = ref[0]!.mb;
  const faster = mine.filter((r, i) => r.s < ref[i]!.s).length;
  console.log([
    `reference     ${against}: ${refS.toFixed(2)} s mean, ${refMb.toFixed(1)} MB parsed (${ref[0]!.files} files), ${(refMb / refS).toFixed(2)} MB/s, peak RSS ${Math.max(...ref.map((r) => r.rssMb))} MB`,
    `this tree     ${mineS.toFixed(2)} s mean, ${mine[0]!.mb.toFixed(1)} MB parsed (${mine[0]!.files} files), ${(mine[0]!.mb / mineS).toFixed(2)} MB/s, peak RSS ${Math.max(...mine.map((r) => r.rssMb))} MB`,
    `same bytes    over the reference's ${refMb.toFixed(1)} MB: reference ${(refMb / refS).toFixed(2)} MB/s, this tree ${(refMb / mineS).toFixed(2)} MB/s`,
    `ratio         this tree's time / the reference's = ${(mineS / refS).toFixed(2)} (this tree faster in ${faster} of ${pairs} pairs)`,
  ].join('\n'));
} finally {
  if (made && !keep) {
    try {
      git('worktree', 'remove', '--force', refDir);
    } catch {
      console.error(`bench:ingest-vs: could not remove the worktree ${refDir} (git worktree prune clears it)`);
    }
  } else if (made) {
    console.log(`kept          ${refDir} (rerun with --ref-dir ${refDir})`);
  }
}
