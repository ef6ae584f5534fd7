// Test helper: the files under a lake that no metadata the catalog ever
// pointed at reaches (what a crash may leave and gc must collect).
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { EventLog } from '../../src/log/event-log.ts';
import { readMetadata } from '../../src/lake/table/commit.ts';
import { readManifestList } from '../../src/lake/scan/plan.ts';
import { decodeManifest } from '../../src/lake/avro/manifest.ts';
import { localPath } from '../../src/lake/io/paths.ts';

export async function unreferenced(root: string): Promise<string[]> {
  const log = await EventLog.open(root);
  try {
    const { lake } = log;
    const reach = new Set<string>();
    // literal, as the lake's FileIO maps a location (a partition folder `repo=%40universe` is named so on disk)
    const local = (p: string): string => localPath(p);
    for (const ident of lake.catalog.listAllTables()) {
      const metas = new Set(lake.catalog.everMetadataLocations(ident));
      metas.add(lake.catalog.loadTable(ident)!.metadataLocation);
      for (const m of [...metas]) {
        if (!existsSync(local(m))) continue;
        const md = await readMetadata(lake.io, m);
        for (const e of md.metadataLog) metas.add(e.metadataFile);
      }
      for (const m of metas) {
        if (!existsSync(local(m))) continue;
        reach.add(local(m));
        const md = await readMetadata(lake.io, m);
        for (const s of md.snapshots) {
          if (!existsSync(local(s.manifestList))) continue; // expired by gc: its snapshot is gone from newer metadata
          reach.add(local(s.manifestList));
          for (const mf of await readManifestList(lake.io, s)) {
            if (!existsSync(local(mf.manifestPath))) continue;
            reach.add(local(mf.manifestPath));
            const { entries } = decodeManifest(readFileSync(local(mf.manifestPath)), mf.manifestPath, { addedSnapshotId: mf.addedSnapshotId, sequenceNumber: mf.sequenceNumber });
            for (const en of entries) reach.add(local(en.dataFile.filePath));
          }
        }
      }
    }
    const all = (readdirSync(root, { recursive: true }) as string[])
      .map((f) => path.join(root, f))
      .filter((f) => statSync(f).isFile() && !path.basename(f).startsWith('catalog.db'));
    return all.filter((f) => !reach.has(f));
  } finally {
    log.close();
  }
}
