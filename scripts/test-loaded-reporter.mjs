// A node:test reporter for scripts/test-loaded.ts: one JSON line per top-level
// test ({ file, name, ms, ok, skipped }), relative to the repository root.
import * as path from 'node:path';

export default async function* report(source) {
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const d = event.data;
    if (d.nesting !== 0 || !d.file || d.details?.type === 'suite') continue;
    // a file's own entry (its path as its name) is not a test
    if (d.name === d.file || path.resolve(d.name) === d.file) continue;
    yield `${JSON.stringify({ file: path.relative(process.cwd(), d.file), name: d.name, ms: Math.round(d.details?.duration_ms ?? 0), ok: event.type === 'test:pass', skipped: Boolean(d.skip) })}\n`;
  }
}
