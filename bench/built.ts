// Which code a benchmark times: the compiled build in dist/ (what `mimir`
// runs: bin/mimir.js uses it while it is fresh) or the TypeScript sources
// through tsx. A benchmark of the product times dist/: tsx compiles with
// esbuild's keepNames (every closure is named as it is created) and loads
// more at start. On bench:ingest's corpus the two measured close (user CPU of
// `universe add`, two pairs at load 7-10: dist 59 and 43 s, tsx 55 and 52 s),
// so the choice is about measuring the right thing, not a speed-up. Fresh =
// dist/BUILD exists and no file under src/ is newer than the time it records
// (the rule of bin/mimir.js). Read-only.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));

/** Why dist/ cannot be timed, or undefined when it is fresh. */
export function distStaleReason(): string | undefined {
  let built: unknown;
  try {
    built = (JSON.parse(readFileSync(path.join(root, 'dist', 'BUILD'), 'utf8')) as { startedMs?: unknown }).startedMs;
  } catch {
    return 'no build (run `npm run build`)';
  }
  if (typeof built !== 'number') return 'dist/BUILD has no start time';
  const src = path.join(root, 'src');
  if (!existsSync(src)) return undefined;
  const stack = [src];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) stack.push(p);
      else if (statSync(p).mtimeMs > built) return `${path.relative(root, p)} is newer than the build`;
    }
  }
  return undefined;
}

/**
 * The module `rel` (a path under src/ without extension, e.g. `ingest/index`)
 * from dist/ when `useDist`, else from src/ through tsx. Both have the same
 * exports; the caller types it as the source module.
 */
export async function importCode<T>(rel: string, useDist: boolean): Promise<T> {
  const file = useDist ? path.join(root, 'dist', `${rel}.js`) : path.join(root, 'src', `${rel}.ts`);
  return (await import(new URL(`file://${file}`).href)) as T;
}
