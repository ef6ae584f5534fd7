// Orphan removal with a zero horizon never deletes what a commit in flight in
// another process needs (its lease protects it), and collects what a writer
// killed with SIGKILL left behind once its lease is dead. Real child processes
// (maintenance-child.ts). Each case runs twice: with the lake's SQLite catalog
// and with its catalog in PostgreSQL (a throwaway server, test/pg.ts; the
// leases gc reads are then the database's).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { existsSync, utimesSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import { Lake } from '../../src/lake/lake.ts';
import type { Batch, Schema, Value } from '../../src/lake/spec/types.ts';
import { removeOrphanFiles } from '../../src/lake/maintenance/index.ts';
import { repoRoot, scratch } from '../helpers.ts';
import { needPostgres, type PgServer } from '../pg.ts';

const work = scratch('mimir-inflight-');
let server: PgServer | undefined;
before(async () => {
  server = await needPostgres();
});
after(() => {
  server?.stop();
  work.cleanup();
});

type Kind = 'sqlite' | 'postgresql';
/** `name` with each catalog; the PostgreSQL one is skipped (loudly, by needPostgres) when no server could start. */
function matrix(name: string, body: (kind: Kind) => Promise<void>): void {
  for (const kind of ['sqlite', 'postgresql'] as const) {
    test(`[${kind}] ${name}`, { timeout: 600_000 }, async (t) => {
      if (kind === 'postgresql' && server === undefined) {
        t.skip('PostgreSQL could not be started (see the message above)');
        return;
      }
      await body(kind);
    });
  }
}

const schema: Schema = {
  schemaId: 0,
  fields: [
    { id: 1, name: 'repo', required: true, type: { type: 'string' } },
    { id: 2, name: 'id', required: true, type: { type: 'long' } },
  ],
};
const props = { 'write.parquet.compression-codec': 'uncompressed' };
const ident = { namespace: ['o'], name: 't' };

function batch(repo: string, from: number, n: number): Batch {
  const rows: Value[][] = Array.from({ length: n }, (_, i) => [repo, BigInt(from + i)]);
  return { fields: schema.fields, numRows: n, columns: [rows.map((r) => r[0]!), rows.map((r) => r[1]!)] };
}
const local = (p: string): string => (p.startsWith('file:') ? fileURLToPath(p) : p);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

let counter = 0;
async function lakeWithTable(kind: Kind): Promise<{ lake: Lake; root: string; catalog?: string }> {
  const root = path.join(work.dir, `lake-${counter++}`);
  const catalog = kind === 'postgresql' && server !== undefined ? await server.database('inflight') : undefined;
  const lake = Lake.open(root, catalog !== undefined ? { catalog } : {});
  const t = await lake.createTable(ident, schema, { properties: props });
  await t.append([batch('parent', 0, 10)]);
  return { lake, root, ...(catalog !== undefined ? { catalog } : {}) };
}

/** The child, and a reader of its stdout lines. */
function startChild(root: string, from: number, n: number, catalog?: string): { child: ChildProcessWithoutNullStreams; line: (prefix: string) => Promise<string>; exit: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/lake/maintenance-child.ts', 'append', root, 'o.t', String(from), String(n), ...(catalog !== undefined ? [catalog] : [])], {
    cwd: repoRoot,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const queue: string[] = [];
  const waiters: ((l: string) => void)[] = [];
  createInterface({ input: child.stdout }).on('line', (l) => {
    const w = waiters.shift();
    if (w) w(l);
    else queue.push(l);
  });
  const line = async (prefix: string): Promise<string> => {
    const next = queue.shift() ?? (await Promise.race([new Promise<string>((r) => waiters.push(r)), exit.then((c) => `exit ${c}`)]));
    if (!next.startsWith(prefix)) throw new Error(`child: expected a line starting "${prefix}", got "${next}"; stderr: ${stderr}`);
    return next.slice(prefix.length).trim();
  };
  return { child, line, exit };
}

matrix('orphans in flight: a zero horizon keeps the files of a commit paused in another process; it then commits and reads back', async (kind) => {
  const { lake, root, catalog } = await lakeWithTable(kind);
  const c = startChild(root, 1000, 7, catalog);
  try {
    const written = (JSON.parse(await c.line('written ')) as string[]).map(local);
    assert.ok(written.length >= 1);
    const lease = lake.catalog.liveLeases().find((l) => l.pid === c.child.pid);
    assert.ok(lease, 'the child holds a live lease');
    // an old stray (older than the lease) still goes while the child is in flight
    const oldStray = path.join(local(lake.tableLocation(ident)), 'data', `00077-${randomUUID()}.parquet`);
    writeFileSync(oldStray, 'x');
    const old = new Date(Date.now() - 60_000);
    utimesSync(oldStray, old, old);
    await sleep(20);

    const r = await removeOrphanFiles(lake, { olderThanMs: 0 });
    for (const f of written) assert.ok(existsSync(f), `the child's file survives: ${f}`);
    assert.deepEqual(r.deleted.map(local), [oldStray]);
    assert.ok(r.kept.inFlight >= written.length);

    c.child.stdin.write('go\n');
    await c.line('committed ');
    assert.equal(await c.exit, 0);
    const t = await lake.loadTable(ident);
    const rows = await t.scan().toArray();
    assert.equal(rows.length, 17);
    assert.equal(rows.filter((x) => x.repo === 'child').length, 7);
    // committed now: reachable, so a zero horizon keeps them with no lease at all
    assert.equal(lake.catalog.liveLeases().length, 0);
    await sleep(20);
    const r2 = await removeOrphanFiles(lake, { olderThanMs: 0 });
    assert.deepEqual(r2.deleted, []);
    for (const f of written) assert.ok(existsSync(f));
    assert.equal((await (await lake.loadTable(ident)).scan().toArray()).length, 17);
  } finally {
    c.child.kill('SIGKILL');
    lake.close();
  }
});

matrix('orphans in flight: a writer killed with SIGKILL mid-write leaves a dead lease, and its files are collected', async (kind) => {
  const { lake, root, catalog } = await lakeWithTable(kind);
  const before = await (await lake.loadTable(ident)).scan().toArray();
  const c = startChild(root, 2000, 5, catalog);
  let written: string[];
  try {
    written = (JSON.parse(await c.line('written ')) as string[]).map(local);
    assert.ok(lake.catalog.liveLeases().some((l) => l.pid === c.child.pid));
  } finally {
    c.child.kill('SIGKILL');
  }
  await c.exit;
  assert.deepEqual(lake.catalog.liveLeases(), [], 'the dead process holds no live lease');
  for (const f of written) assert.ok(existsSync(f), 'the killed writer left its files');
  await sleep(20);
  const r = await removeOrphanFiles(lake, { olderThanMs: 0 });
  assert.deepEqual(r.deleted.map(local).sort(), [...written].sort());
  for (const f of written) assert.ok(!existsSync(f));
  const t = await lake.loadTable(ident);
  assert.deepEqual(await t.scan().toArray(), before);
  lake.close();
});
