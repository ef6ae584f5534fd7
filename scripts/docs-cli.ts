// `npm run docs:cli [-- --check]`: the reference at the end of docs/cli.md,
// "every command's --help", made from the CLI itself so it cannot drift: each
// command of src/cli/commands.ts (a group's commands one by one) runs with
// --help through bin/mimir.js, and its text goes in without the "Global
// options" block (docs/cli.md prints that once, at its top). Everything above
// the reference's heading is left as it is.
//
// --check writes nothing: it exits 1 naming the commands whose text differs
// (test/cli/docs-cli.test.ts runs it), so a changed option without a
// regenerated page fails the suite.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { COMMANDS, isGroup } from '../src/cli/commands.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DOC = path.join(root, 'docs', 'cli.md');
const HEADING = "## Reference: every command's `--help`";
const INTRO = [
  HEADING,
  '',
  'As printed by `mimir <command> --help`, without the options every command',
  'takes (at the top of this page). Made by `npm run docs:cli` from the CLI',
  'itself; the suite fails when it differs from what the CLI prints.',
  '',
].join('\n');

/** A command's --help text without its "Global options:" block. */
function help(words: string[]): string {
  const out = execFileSync(process.execPath, [path.join(root, 'bin', 'mimir.js'), ...words, '--help'], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', MIMIR_SERVER: '', COLUMNS: '100' },
  });
  const lines = out.replace(/\s+$/, '').split('\n');
  const kept: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] === 'Global options:') {
      // the block runs to the next blank line; drop the blank line before it too
      while (i + 1 < lines.length && lines[i + 1]!.trim() !== '') i++;
      if (kept.at(-1) === '') kept.pop();
      continue;
    }
    kept.push(lines[i]!);
  }
  return kept.join('\n').replace(/\n{3,}/g, '\n\n');
}

function reference(): { text: string; sections: Map<string, string> } {
  const sections = new Map<string, string>();
  for (const e of COMMANDS) {
    const runs = isGroup(e) ? e.commands.map((c) => [e.name, c.name]) : [[e.name]];
    for (const words of runs) sections.set(`mimir ${words.join(' ')}`, help(words));
  }
  const body = [...sections].map(([name, text]) => `### \`${name}\`\n\n\`\`\`text\n${text}\n\`\`\`\n`).join('\n');
  return { text: `${INTRO}\n${body}`, sections };
}

const doc = readFileSync(DOC, 'utf8');
const at = doc.indexOf(HEADING);
if (at < 0) {
  console.error(`docs:cli: ${path.relative(root, DOC)} has no heading "${HEADING}"; nothing written`);
  process.exit(1);
}
const { text, sections } = reference();
const next = `${doc.slice(0, at)}${text}`;
if (process.argv.includes('--check')) {
  if (next === doc) {
    console.log(`docs:cli: ${path.relative(root, DOC)} holds the --help of all ${sections.size} commands as the CLI prints them`);
  } else {
    const old = doc.slice(at);
    const stale = [...sections].filter(([name, t]) => !old.includes(`### \`${name}\`\n\n\`\`\`text\n${t}\n\`\`\`\n`)).map(([n]) => n);
    console.error(`docs:cli: ${path.relative(root, DOC)} differs from what the CLI prints${stale.length ? ` for: ${stale.join(', ')}` : ' (sections added, removed or reordered)'}; run \`npm run docs:cli\``);
    process.exit(1);
  }
} else {
  writeFileSync(DOC, next);
  console.log(`docs:cli: wrote the --help of ${sections.size} commands into ${path.relative(root, DOC)}`);
}
