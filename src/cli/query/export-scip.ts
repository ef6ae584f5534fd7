// `mimir export scip --repo R [--as-of GEN|TIME] [--out FILE] [--root DIR]`:
// the repo's items, references and calls as a SCIP index (src/query/scip.ts)
// for Sourcegraph and other SCIP consumers. The index is binary: written to
// --out, or to stdout only when stdout is not a terminal (refused on one,
// naming --out). --out writes FILE.tmp-<pid> and renames it into place at the
// end, so a failed or killed export never leaves a partial FILE (the temp
// file is removed on failure). Progress on stderr; the one-line report on
// stderr (with --out or stdout piped alike), or as JSON with --json and --out.
import { createWriteStream, readFileSync, renameSync, rmSync, type WriteStream } from 'node:fs';
import * as nodePath from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { CommandSpec, Context } from '../command.ts';
import { UsageError, type Args } from '../args.ts';
import { AS_OF, parseAsOf } from './common.ts';
import { openLog } from '../log/common.ts';
import { exportScip, formatScipReport, type ScipReport } from '../../query/scip.ts';

export const command: CommandSpec = {
  usage: '--repo R [--as-of GEN|TIME] [--out FILE] [--root DIR] [options]',
  description: [
    'Writes one repo of the lake as a SCIP index (protobuf): a document per Rust source file with the definitions of its items and the references and calls in it, symbols in rust-analyzer\'s scheme (rust-analyzer cargo <crate> <version> <path>), and the dependency items referenced as external symbols.',
    'Binary: give --out FILE, or pipe stdout (a terminal is refused).',
  ].join('\n'),
  positionals: [],
  options: [
    { name: 'repo', kind: 'value', arg: 'R', help: 'the repo to export (required)' },
    AS_OF,
    { name: 'out', kind: 'value', arg: 'FILE', help: 'write the index to FILE (default: stdout, when it is not a terminal)' },
    { name: 'root', kind: 'value', arg: 'DIR', help: 'the project root recorded in the index (default: the folder the repo was last ingested from)' },
  ],
  examples: ['mimir export scip --repo myrepo --out index.scip', 'mimir export scip --repo myrepo --as-of 2024-05-01T00:00:00Z > index.scip'],
  pager: false,
  run,
};

async function run(args: Args, ctx: Context): Promise<void> {
  const repo = args.value('repo');
  if (repo === undefined) throw new UsageError('expected --repo R (the repo to export; mimir repo list names them)', args.commandPath);
  const asOf = parseAsOf(args);
  const out = args.value('out');
  const root = args.value('root');
  if (out === undefined && ctx.out.stdoutIsTTY) {
    throw new UsageError('the SCIP index is binary and stdout is a terminal: give --out FILE (or pipe stdout) — nothing written', args.commandPath);
  }
  const open = await openLog(ctx, { readOnly: 'auto', reader: true });
  const target = out === undefined ? null : nodePath.resolve(out);
  const tmp = target === null ? null : `${target}.tmp-${process.pid}`;
  const sink: WriteStream | NodeJS.WriteStream = tmp === null ? process.stdout : createWriteStream(tmp);
  let report: ScipReport;
  try {
    report = await exportScip(open.log, {
      repo,
      asOf,
      projectRoot: root === undefined ? undefined : pathToFileURL(nodePath.resolve(root)).href,
      tool: { name: 'mimir', version: toolVersion(), arguments: process.argv.slice(2) },
      onProgress: (done, total) => ctx.out.status(`export scip: ${done} of ${total} documents`),
    }, (bytes) => writeTo(sink, bytes));
    if (tmp !== null) {
      await closeStream(sink as WriteStream);
      renameSync(tmp, target!);
    }
  } catch (e) {
    if (tmp !== null) {
      (sink as WriteStream).destroy();
      rmSync(tmp, { force: true });
    }
    throw e;
  } finally {
    open.close();
  }
  ctx.out.clearProgress();
  if (ctx.json && target !== null) await ctx.out.json({ ...report, out: target });
  else ctx.out.err(`${formatScipReport(report)}${target === null ? '' : ` to ${target}`}`);
}

function writeTo(s: NodeJS.WritableStream, bytes: Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => {
    s.write(bytes, (e) => (e ? reject(e) : resolve()));
  });
}

function closeStream(s: WriteStream): Promise<void> {
  return new Promise((resolve, reject) => {
    s.on('error', reject);
    s.end(() => resolve());
  });
}

/** The package version (tool_info.version), as `mimir --version` reads it. */
function toolVersion(): string {
  try {
    const here = nodePath.dirname(fileURLToPath(import.meta.url));
    const pkg = JSON.parse(readFileSync(nodePath.join(here, '..', '..', '..', 'package.json'), 'utf8')) as { version?: string };
    return pkg.version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}
