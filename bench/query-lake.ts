// The "1x" bench lake of bench:query (and bench:web): Debian's crate corpus
// (/usr/share/cargo/registry, installed by scripts/install-debian-crates.sh)
// added to the universe, then the sample workspace ingested as repo `sample`
// with its dependencies, then one state maintenance pass. Crash story: the
// lake counts as built only once its marker file (`.bench-complete-1x`) is
// written, last; a lake without it is removed and built again from scratch.
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EventLog } from '../src/log/event-log.ts';
import { ingest, universeAdd } from '../src/ingest/index.ts';
import { maintainState, formatMaintainReport } from '../src/log/state/maintain.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The marker of a complete lake of `n` times the corpus (1x here; bench:query writes the 10x one). */
export const benchLakeMarker = (lake: string, n: number): string => path.join(lake, `.bench-complete-${n}x`);

/** Build the 1x lake in `lake` from `corpus` unless its marker says it is complete; `log` gets one line. */
export async function ensureBenchLake(lake: string, corpus: string, log: (line: string) => void): Promise<void> {
  if (existsSync(benchLakeMarker(lake, 1))) {
    log(`lake: reusing ${lake}`);
    return;
  }
  rmSync(lake, { recursive: true, force: true });
  mkdirSync(lake, { recursive: true });
  const l = await EventLog.open(lake);
  try {
    const t0 = Date.now();
    const u = await universeAdd(l, [corpus]);
    const s = await ingest(l, path.join(root, 'samples', 'workspace'), { repo: 'sample', withDeps: true });
    const m = await maintainState(l, { force: true });
    log(`lake: built ${lake} in ${((Date.now() - t0) / 1000).toFixed(0)} s: universe +${u.events.add} events (${u.crates} crates), sample +${s.events.add}; ${formatMaintainReport(m)}`);
  } finally {
    l.close();
  }
  writeFileSync(benchLakeMarker(lake, 1), new Date().toISOString());
}
