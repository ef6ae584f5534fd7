// Child process: keep appending ring and repo rows of every kind to a lake
// until <stopFile> exists, printing one JSON line per append:
// {"kind","gen","ring","ids":[…]}, back to back (or pausing [pauseMs], default
// 0, between appends).
// Usage: ring-append-child.ts <root> <stopFile> <tag> [pauseMs]
import { existsSync } from 'node:fs';
import { EventLog } from '../../src/log/event-log.ts';
import { SOURCE_KINDS } from '../../src/log/schema.ts';
import { ring, rowsOf } from './ring-split-helpers.ts';

async function main(): Promise<void> {
  const [root, stop, tag, pause] = process.argv.slice(2);
  const pauseMs = Number(pause ?? '0');
  if (!root || !stop || !tag) throw new Error('usage: ring-append-child.ts <root> <stopFile> <tag>');
  const log = await EventLog.open(root);
  for (let i = 0; !existsSync(stop); i++) {
    for (const kind of SOURCE_KINDS) {
      const rows = [...ring(kind, 3, i * 3, 5, tag), ...rowsOf(kind, 'acme', 2, i * 2, 3, tag)];
      const r = await log.append(kind, rows);
      process.stdout.write(JSON.stringify({ kind, gen: String(r.generation), ring: r.ring, ids: rows.map((x) => x['id']) }) + '\n');
      if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
    }
  }
  log.close();
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
