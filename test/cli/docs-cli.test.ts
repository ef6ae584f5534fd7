// docs/cli.md's reference section is what the CLI prints for each command's
// --help (scripts/docs-cli.ts --check): a changed option, command or example
// without `npm run docs:cli` fails here, naming the commands that drifted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

// ~40 short node processes: about 15 s idle; 600 s holds at load 16 with room
test("docs/cli.md's reference equals every command's --help as the CLI prints it", { timeout: 600_000 }, () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(root, 'scripts', 'docs-cli.ts'), '--check'], { cwd: root, encoding: 'utf8' });
  assert.equal(r.status, 0, `${r.stderr}${r.stdout}`);
  assert.match(r.stdout, /holds the --help of all \d+ commands/);
});
