// Child process for maintenance-inflight.test.ts (not a test itself).
//   append <lakeRoot> <namespace.table> <from> <n> [<catalog>]: open the lake
//     (its catalog elsewhere when given: a postgresql:// URI) and, inside a
//     lease (`lake.inFlight`), write data files for rows id from..from+n-1
//     (repo 'child'), print `written <json paths>`, then wait for a line on
//     stdin before committing them; print `committed <snapshot id>` and exit.
//     Killed with SIGKILL while waiting, it leaves its files and a dead lease.
import { createInterface } from 'node:readline';
import { Lake } from '../../src/lake/lake.ts';
import { parseIdent } from '../../src/lake/catalog/sql-catalog.ts';

const [mode, lakeRoot, identStr, fromStr, nStr, catalog] = process.argv.slice(2);

async function appendPaused(): Promise<void> {
  const lake = Lake.open(lakeRoot!, { create: false, ...(catalog !== undefined ? { catalog } : {}) });
  const t = await lake.loadTable(parseIdent(identStr!));
  const from = Number(fromStr);
  const n = Number(nStr);
  const lines = createInterface({ input: process.stdin });
  const go = new Promise<void>((resolve) => lines.once('line', () => resolve()));
  const res = await lake.inFlight(`child ${process.pid} append`, async () => {
    const files = await t.writeDataFiles([
      {
        fields: t.schema.fields,
        numRows: n,
        columns: [Array.from({ length: n }, () => 'child'), Array.from({ length: n }, (_, i) => BigInt(from + i))],
      },
    ]);
    process.stdout.write(`written ${JSON.stringify(files.map((f) => f.file.filePath))}\n`);
    await go;
    return t.appendFiles(files);
  });
  lines.close();
  process.stdout.write(`committed ${res.snapshotId}\n`);
  lake.close();
}

if (mode === 'append') await appendPaused();
else throw new Error(`maintenance-child: unknown mode '${mode}'`);
