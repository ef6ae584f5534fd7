// Child process for catalog-concurrency.test.ts (not a test itself).
// <lake> is a lake root (its catalog.db), a catalog file, or a postgresql:// URI.
//   commit <lake> <ident> <count> <label>: after 'go' on stdin, make <count>
//     CAS commits on one table (reload, compute next, commit; on conflict retry
//     with jittered backoff); prints 'ready', then a JSON summary line.
//   open <lake>: open the catalog (as a writer), print 'opened <generation>', close.
//   lease <lake> <releaseBase>: take a lease, print 'ready <id>', then idle
//     until killed.
import { createInterface } from 'node:readline';
import { existsSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { CommitConflictError, parseIdent, type Catalog } from '../../src/lake/catalog/catalog.ts';
import { isServerCatalog, openCatalog } from '../../src/lake/catalog/open.ts';

const [mode, lakeRoot, ...rest] = process.argv.slice(2);

function open(): Catalog {
  const file = isServerCatalog(lakeRoot) || (existsSync(lakeRoot) && statSync(lakeRoot).isFile()) ? lakeRoot : path.join(lakeRoot, 'catalog.db');
  return openCatalog(file, { create: false });
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

async function commitLoop(identStr: string, count: number, label: string): Promise<void> {
  const ident = parseIdent(identStr);
  const cat = open();
  const lines = createInterface({ input: process.stdin });
  const go = new Promise<void>((resolve) => lines.once('line', () => resolve()));
  process.stdout.write('ready\n');
  await go;
  lines.close();
  let conflicts = 0;
  for (let i = 0; i < count; i++) {
    for (let attempt = 1; ; attempt++) {
      const cur = cat.loadTable(ident);
      if (cur === undefined) throw new Error(`table ${identStr} vanished`);
      await sleep(Math.random() * 2); // stands for writing the new metadata file
      try {
        cat.commit([{ ident, expected: cur.metadataLocation, next: `${label}-${i}.metadata.json` }], `${label} ${i}`);
        break;
      } catch (e) {
        if (!(e instanceof CommitConflictError) || attempt > 200) throw e;
        conflicts++;
        await sleep(Math.random() * Math.min(20, attempt * 2));
      }
    }
  }
  cat.close();
  process.stdout.write(JSON.stringify({ label, commits: count, conflicts }) + '\n');
}

async function holdLease(releaseBase: bigint): Promise<void> {
  const cat = open();
  const lease = cat.beginLease({ releaseBase, note: `child ${process.pid}` });
  process.stdout.write(`ready ${lease.id}\n`);
  setInterval(() => lease.renew(), 60_000);
}

if (mode === 'commit') await commitLoop(rest[0], Number(rest[1]), rest[2]);
else if (mode === 'open') {
  const cat = open();
  process.stdout.write(`opened ${cat.pointerGeneration()}\n`);
  cat.close();
} else if (mode === 'lease') await holdLease(BigInt(rest[0]));
else throw new Error(`catalog-child: unknown mode '${mode}'`);
