// Shared test helpers: where the shared fixtures live, and scratch folders.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** `../shared/fixtures/iceberg` beside the checkout, or undefined when absent. */
export const icebergFixtures: string | undefined = (() => {
  const dir = path.resolve(repoRoot, '..', 'shared', 'fixtures', 'iceberg');
  return existsSync(dir) ? dir : undefined;
})();

/** The `skip` option for tests that need the shared fixtures. */
export const needsFixtures: string | false = icebergFixtures
  ? false
  : 'skipped: ../shared/fixtures/iceberg is absent (the shared folder beside the checkout)';

/** A fresh scratch folder, removed when `cleanup` runs (call it in `after`). */
export function scratch(prefix = 'mimir-test-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
