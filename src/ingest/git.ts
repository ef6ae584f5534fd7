// Git-native ingest's reading side: the commits of a range and the tree of
// each commit, read from the repository itself with the `git` CLI — the
// user's work tree, index and HEAD are never touched.
//
// A `TreeMirror` keeps one scratch folder holding exactly the tree of the
// commit last asked for: the first commit is written whole (`ls-tree` +
// blobs through one long-lived `git cat-file --batch`), each later one by the
// paths `diff-tree` says changed, so walking 200 commits writes only what
// changed between them. Ingest then reads the mirror like any workspace; its
// per-file hashes make unchanged crates cost a hash, not a parse.
//
// Invariants: the mirror holds regular files only (symlinks are written as
// the link's target text would be wrong, so they are skipped and reported;
// submodules are skipped); paths are taken byte for byte from git (`-z`),
// never through a shell. Crash story: the mirror is scratch — a crash leaves
// a folder under the OS temp dir and nothing in the lake.
import { spawn, execFile } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

/** A commit as a run records it. */
export interface CommitInfo {
  sha: string;
  /** Committer time, ms since the epoch. */
  timeMs: number;
  subject: string;
}

/** git failed, or the input named no commit: the message says which command and why. */
export class GitError extends Error {}

function git(cwd: string, args: string[], input?: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const p = execFile('git', args, { cwd, encoding: 'buffer', maxBuffer: 1 << 30 }, (err, stdout, stderr) => {
      if (err) {
        const why = stderr.toString().trim().split('\n')[0] || err.message;
        reject(new GitError(`git ${args.join(' ')} (in ${cwd}): ${why}`));
      } else resolve(stdout);
    });
    if (input !== undefined) p.stdin!.end(input);
  });
}

/** The top folder of the git work tree holding `dir`, and `dir` relative to it ('' at the top). */
export async function gitTop(dir: string): Promise<{ top: string; prefix: string }> {
  const abs = path.resolve(dir);
  const top = (await git(abs, ['rev-parse', '--show-toplevel'])).toString().trim();
  const prefix = path.relative(top, abs).split(path.sep).join('/');
  return { top, prefix };
}

/**
 * The commits `spec` names, oldest first: `A..B` = the first-parent chain
 * from B back to (not including) A; a single rev = that commit alone.
 */
export async function commitsOf(repoDir: string, spec: string): Promise<string[]> {
  if (spec.trim() === '') throw new GitError('--git: expected a revision or a range A..B, found an empty string');
  if (spec.includes('...')) throw new GitError(`--git ${spec}: a symmetric range (A...B) has no single order; use A..B`);
  if (spec.includes('..')) {
    const [a, b] = spec.split('..');
    const from = await revParse(repoDir, a || 'HEAD');
    const to = await revParse(repoDir, b || 'HEAD');
    const out = (await git(repoDir, ['rev-list', '--first-parent', '--reverse', `${from}..${to}`])).toString().split('\n').filter(Boolean);
    if (out.length === 0) throw new GitError(`--git ${spec}: the range holds no commit (is ${b || 'HEAD'} an ancestor of ${a || 'HEAD'}?)`);
    return out;
  }
  return [await revParse(repoDir, spec)];
}

/** The full commit id `rev` names (a sha, prefix, tag or branch). */
export async function revParse(repoDir: string, rev: string): Promise<string> {
  if (rev.startsWith('-')) throw new GitError(`not a revision: ${rev}`);
  try {
    return (await git(repoDir, ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`])).toString().trim();
  } catch {
    throw new GitError(`${rev} names no commit in the git repository at ${repoDir}`);
  }
}

/** Time and subject of each commit. */
export async function commitInfo(repoDir: string, sha: string): Promise<CommitInfo> {
  const out = (await git(repoDir, ['show', '-s', '--format=%H%x00%ct%x00%s', sha])).toString();
  const [full, ct, subject] = out.replace(/\n$/, '').split('\0');
  if (!full || !ct) throw new GitError(`git show ${sha}: unexpected output ${JSON.stringify(out.slice(0, 80))}`);
  return { sha: full, timeMs: Number(ct) * 1000, subject: subject ?? '' };
}

/** Tags and branches pointing at `sha` (short names: `v1.2`, `main`). */
export async function refsAt(repoDir: string, sha: string): Promise<string[]> {
  const out = (await git(repoDir, ['for-each-ref', '--points-at', sha, '--format=%(refname:short)', 'refs/tags', 'refs/heads'])).toString();
  return out.split('\n').filter(Boolean).sort();
}

/** One long-lived `git cat-file --batch`: blob contents by id, in request order. */
class BlobReader {
  private readonly proc;
  private buf: Buffer = Buffer.alloc(0);
  private readonly waiting: { resolve: (b: Buffer) => void; reject: (e: Error) => void; id: string }[] = [];
  private failed: Error | null = null;

  constructor(repoDir: string) {
    this.proc = spawn('git', ['cat-file', '--batch'], { cwd: repoDir, stdio: ['pipe', 'pipe', 'pipe'] });
    this.proc.stdout.on('data', (d: Buffer) => {
      this.buf = this.buf.length === 0 ? d : Buffer.concat([this.buf, d]);
      this.drain();
    });
    let err = '';
    this.proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
    this.proc.on('close', (code) => this.fail(new GitError(`git cat-file --batch ended (code ${code}) ${err.trim()}`)));
    this.proc.on('error', (e) => this.fail(new GitError(`git cat-file --batch: ${e.message}`)));
  }

  private fail(e: Error): void {
    this.failed ??= e;
    for (const w of this.waiting.splice(0)) w.reject(e);
  }

  private drain(): void {
    while (this.waiting.length > 0) {
      const nl = this.buf.indexOf(10);
      if (nl < 0) return;
      const header = this.buf.subarray(0, nl).toString();
      const w = this.waiting[0]!;
      const m = /^([0-9a-f]+) (\w+) (\d+)$/.exec(header);
      if (!m) {
        this.waiting.shift();
        this.buf = this.buf.subarray(nl + 1);
        w.reject(new GitError(`git cat-file: ${header} (asked for ${w.id})`));
        continue;
      }
      const size = Number(m[3]);
      if (this.buf.length < nl + 1 + size + 1) return;
      const body = Buffer.from(this.buf.subarray(nl + 1, nl + 1 + size));
      this.buf = this.buf.subarray(nl + 1 + size + 1);
      this.waiting.shift();
      w.resolve(body);
    }
  }

  read(id: string): Promise<Buffer> {
    if (this.failed) return Promise.reject(this.failed);
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject, id });
      this.proc.stdin.write(`${id}\n`);
    });
  }

  close(): void {
    this.proc.stdin.end();
  }
}

/** What one `checkout` did to the mirror. */
export interface MirrorReport {
  sha: string;
  written: number;
  deleted: number;
  /** Paths not mirrored (symlinks, submodules), with the reason. */
  skipped: { path: string; why: string }[];
}

interface Entry {
  mode: string;
  id: string;
  path: string;
}

/** Regular files are mirrored; the rest is reported. */
function skipReason(mode: string): string | null {
  if (mode === '100644' || mode === '100755') return null;
  if (mode === '120000') return 'symlink (not followed in a git tree)';
  if (mode === '160000') return 'submodule (not read)';
  return `mode ${mode}`;
}

/** A scratch folder holding the tree of one commit at a time (see the module). */
export class TreeMirror {
  private current: string | null = null;
  private readonly blobs: BlobReader;

  private constructor(readonly repoDir: string, readonly dir: string) {
    this.blobs = new BlobReader(repoDir);
  }

  static async open(repoDir: string): Promise<TreeMirror> {
    const dir = await mkdtemp(path.join(tmpdir(), 'mimir-git-'));
    return new TreeMirror(repoDir, dir);
  }

  /** Make the mirror hold exactly the tree of `sha`. */
  async checkout(sha: string): Promise<MirrorReport> {
    const report: MirrorReport = { sha, written: 0, deleted: 0, skipped: [] };
    if (this.current === null) {
      for (const e of await this.lsTree(sha)) await this.put(e, report);
    } else if (this.current !== sha) {
      const out = (await git(this.repoDir, ['diff-tree', '-r', '-z', '--no-renames', '--no-commit-id', this.current, sha])).toString('latin1');
      // records: ":<old mode> <new mode> <old id> <new id> <status>\0<path>\0"
      const parts = out.split('\0');
      for (let i = 0; i + 1 < parts.length; i += 2) {
        const meta = parts[i]!.replace(/^:/, '').split(' ');
        const p = Buffer.from(parts[i + 1]!, 'latin1').toString('utf8');
        const [, newMode, , newId, status] = meta;
        const abs = this.abs(p);
        if (status === 'D' || newMode === '000000') {
          // a folder that became a file earlier in this diff already took its children with it
          await rm(abs, { force: true }).catch((e: NodeJS.ErrnoException) => {
            if (e.code !== 'ENOTDIR') throw e;
          });
          report.deleted++;
          continue;
        }
        await rm(abs, { force: true, recursive: true });
        await this.put({ mode: newMode!, id: newId!, path: p }, report);
      }
    }
    this.current = sha;
    return report;
  }

  private async lsTree(sha: string): Promise<Entry[]> {
    const out = (await git(this.repoDir, ['ls-tree', '-r', '-z', '--full-tree', sha])).toString('latin1');
    const entries: Entry[] = [];
    for (const rec of out.split('\0')) {
      if (rec === '') continue;
      const tab = rec.indexOf('\t');
      const [mode, , id] = rec.slice(0, tab).split(' ');
      entries.push({ mode: mode!, id: id!, path: Buffer.from(rec.slice(tab + 1), 'latin1').toString('utf8') });
    }
    return entries;
  }

  private abs(p: string): string {
    const abs = path.resolve(this.dir, p);
    if (!abs.startsWith(this.dir + path.sep)) throw new GitError(`git path ${JSON.stringify(p)} leaves the tree`);
    return abs;
  }

  private async put(e: Entry, report: MirrorReport): Promise<void> {
    const why = skipReason(e.mode);
    if (why) {
      report.skipped.push({ path: e.path, why });
      return;
    }
    const abs = this.abs(e.path);
    await mkdir(path.dirname(abs), { recursive: true });
    await writeFile(abs, await this.blobs.read(e.id));
    report.written++;
  }

  /** Stop the blob reader and delete the scratch folder. */
  async close(): Promise<void> {
    this.blobs.close();
    await rm(this.dir, { recursive: true, force: true });
  }
}
