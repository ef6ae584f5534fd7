// The catalog under several real processes: concurrent CAS commits on one
// table lose nothing, and leases die with the process that held them.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { SqlCatalog, identToString, type TableIdent } from '../../src/lake/catalog/sql-catalog.ts';
import { repoRoot, scratch } from '../helpers.ts';

const tmp = scratch('mimir-catalog-conc-');
after(tmp.cleanup);
const childScript = path.join(repoRoot, 'test', 'lake', 'catalog-child.ts');
const ident: TableIdent = { namespace: ['mimir'], name: 'events' };

interface Child {
  proc: ChildProcessWithoutNullStreams;
  lines: string[];
  /** Resolves with the first line starting with `prefix`. */
  line(prefix: string): Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

function startChild(args: string[]): Child {
  const proc = spawn(process.execPath, ['--import', 'tsx', childScript, ...args], { cwd: repoRoot });
  const lines: string[] = [];
  const waiters: { prefix: string; resolve: (l: string) => void }[] = [];
  let buf = '';
  let stderr = '';
  proc.stdout.setEncoding('utf8');
  proc.stdout.on('data', (chunk: string) => {
    buf += chunk;
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const l = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      lines.push(l);
      for (const w of waiters.splice(0)) {
        if (l.startsWith(w.prefix)) w.resolve(l);
        else waiters.push(w);
      }
    }
  });
  proc.stderr.setEncoding('utf8');
  proc.stderr.on('data', (c: string) => (stderr += c));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    proc.on('exit', (code, signal) => resolve({ code, signal, stderr })),
  );
  const line = (prefix: string): Promise<string> => {
    const have = lines.find((l) => l.startsWith(prefix));
    if (have !== undefined) return Promise.resolve(have);
    return Promise.race([
      new Promise<string>((resolve) => waiters.push({ prefix, resolve })),
      exited.then((x) => {
        throw new Error(`child ${args.join(' ')} exited (${x.code ?? x.signal}) before '${prefix}': ${x.stderr}`);
      }),
    ]);
  };
  return { proc, lines, line, exited };
}

test('concurrency: two processes each make 50 CAS commits on one table; 100 generations, an unbroken chain', async (t) => {
  const root = path.join(tmp.dir, 'lake-cas');
  const cat = SqlCatalog.open(root);
  cat.createNamespace(['mimir']);
  cat.commit([{ ident, expected: null, next: 'start.metadata.json' }], 'create');
  const children = ['A', 'B'].map((label) => startChild(['commit', root, identToString(ident), '50', label]));
  await Promise.all(children.map((c) => c.line('ready')));
  for (const c of children) c.proc.stdin.write('go\n');
  const results = await Promise.all(children.map((c) => c.exited));
  for (const r of results) assert.equal(r.code, 0, r.stderr);
  const summaries = children.map((c) => JSON.parse(c.lines[c.lines.length - 1]) as { conflicts: number });
  t.diagnostic(`conflicts retried: ${summaries.map((s) => s.conflicts).join(', ')}`);

  try {
    assert.equal(cat.pointerGeneration(), 101n);
    const gens = cat.generations({ limit: 1000 }).reverse();
    assert.equal(gens.length, 101);
    const updates = gens.slice(1);
    assert.equal(updates.length, 100);
    const locs = updates.map((g) => {
      assert.equal(g.tables.length, 1);
      assert.deepEqual(g.tables[0].ident, ident);
      return g.tables[0].metadataLocation as string;
    });
    // Every commit of both children is there exactly once, each child's in its own order.
    for (const label of ['A', 'B']) {
      const mine = locs.filter((l) => l.startsWith(`${label}-`));
      assert.deepEqual(mine, Array.from({ length: 50 }, (_, i) => `${label}-${i}.metadata.json`));
    }
    // The previous pointers chain back, generation by generation, to the create.
    const raw = new Database(cat.path, { readonly: true });
    const log = raw
      .prepare(
        `SELECT generation, metadata_location AS loc, previous_metadata_location AS prev FROM mimir_commit_log ORDER BY generation`,
      )
      .all() as { loc: string; prev: string | null }[];
    raw.close();
    assert.equal(log.length, 101);
    assert.equal(log[0].prev, null);
    for (let i = 1; i < log.length; i++) assert.equal(log[i].prev, log[i - 1].loc, `chain broken at log row ${i}`);
    const cur = cat.loadTable(ident);
    assert.deepEqual(cur, { metadataLocation: log[100].loc, previousMetadataLocation: log[99].loc });
    assert.equal(cat.everMetadataLocations(ident).length, 101);
  } finally {
    cat.close();
  }
});

test('leases: a running child\'s lease is live with its releaseBase; after SIGKILL it is not (and is swept)', async () => {
  const root = path.join(tmp.dir, 'lake-lease');
  const cat = SqlCatalog.open(root);
  const a = startChild(['lease', root, '41']);
  const b = startChild(['lease', root, '42']);
  try {
    const idA = BigInt((await a.line('ready ')).split(' ')[1]);
    const idB = BigInt((await b.line('ready ')).split(' ')[1]);
    const live = cat.liveLeases();
    assert.deepEqual(
      live.map((l) => [l.id, l.pid, l.releaseBase]).sort((x, y) => Number(x[2]) - Number(y[2])),
      [
        [idA, a.proc.pid, 41n],
        [idB, b.proc.pid, 42n],
      ],
    );
    assert.ok(live.every((l) => l.expiresMs > Date.now() && l.startedMs <= Date.now()));

    a.proc.kill('SIGKILL');
    const gone = await a.exited;
    assert.equal(gone.signal, 'SIGKILL');
    assert.deepEqual(
      cat.liveLeases().map((l) => [l.id, l.releaseBase]),
      [[idB, 42n]],
    );
    const raw = new Database(cat.path, { readonly: true });
    raw.defaultSafeIntegers(true);
    const ids = (raw.prepare('SELECT id FROM mimir_leases ORDER BY id').all() as { id: bigint }[]).map((r) => r.id);
    raw.close();
    assert.deepEqual(ids, [idB], 'the dead lease was swept');
  } finally {
    a.proc.kill('SIGKILL');
    b.proc.kill('SIGKILL');
    await Promise.all([a.exited, b.exited]);
    cat.close();
  }
});
