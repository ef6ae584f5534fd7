// The ring split while another process keeps appending ring and repo rows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { repoRoot, scratch } from '../helpers.ts';
import { splitRing } from '../../src/log/ring-split.ts';
import { SOURCE_KINDS, UNIVERSE_REPO, tableName } from '../../src/log/schema.ts';
import { eq } from '../../src/lake/expr/expr.ts';
import { buildUnified } from './ring-split-helpers.ts';

const APPENDER = path.join(repoRoot, 'test/log/ring-append-child.ts');

test('split: after the switch no ring row lands in a source table (another process appending)', { timeout: 60_000 }, async () => {
  const s = scratch('mimir-split-conc-');
  let kill = (): void => undefined;
  try {
    const root = path.join(s.dir, 'lake');
    const log = await buildUnified(root, 600, 30, 4);
    const stop = path.join(s.dir, 'stop');
    const child = spawn(process.execPath, ['--import', 'tsx', APPENDER, root, stop, 'conc', '60'], { cwd: repoRoot });
    kill = () => child.kill('SIGKILL');
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    let gone = false;
    const exited = new Promise<number | null>((r) =>
      child.on('close', (c) => {
        gone = true;
        r(c);
      }),
    );
    const lines = (): number => out.split('\n').filter(Boolean).length;
    const waitLines = async (n: number): Promise<void> => {
      while (lines() < n) {
        if (gone) assert.fail(`the appender exited early: ${err}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    await waitLines(6);
    const r = await splitRing(log, { chunkRows: 50 });
    assert.equal(r.switched, true);
    const switchGen = log.readGeneration();
    // let the child append some more after the switch
    const seen = lines();
    await waitLines(seen + 6);
    writeFileSync(stop, '');
    assert.equal(await exited, 0, err);
    const appends = out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { kind: string; gen: string; ring: number; ids: string[] });
    const genOf = async (): Promise<bigint> => log.lake.catalog.pointerGeneration();
    assert.ok((await genOf()) > switchGen);
    for (const kind of SOURCE_KINDS) {
      const rows = await log.rows(kind);
      const ids = rows.map((x) => x['id'] as string);
      assert.equal(new Set(ids).size, ids.length, `${kind}: no row twice`);
      const have = new Set(ids);
      for (const a of appends) if (a.kind === kind) for (const id of a.ids) assert.ok(have.has(id), `${kind}: ${id} present`);
      // source table files added after the switch hold no ring row
      const src = (await log.table(tableName(kind)))!;
      const atSwitch = (await log.table(tableName(kind), switchGen))!;
      const before = new Set((await atSwitch.dataFiles()).map((f) => f.file.filePath));
      let ringAfter = 0;
      for await (const b of src.scan({ filter: eq('repo', UNIVERSE_REPO) }).batches()) if (!before.has(b.source!.file)) ringAfter += b.numRows;
      assert.equal(ringAfter, 0, `${kind}: no ring row in the source table after the switch`);
    }
    const late = appends.filter((a) => BigInt(a.gen) > switchGen);
    assert.ok(late.length > 0 && late.every((a) => a.ring === 3), 'appends after the switch routed their ring rows to the ring tables');
    log.close();
  } finally {
    kill();
    await new Promise((r) => setTimeout(r, 200));
    s.cleanup();
  }
});

