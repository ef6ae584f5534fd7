// Helpers for the ingest tests: a fresh lake, a copy of a fixture workspace
// to edit, and the events one run wrote.
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { eq } from '../../src/lake/expr/expr.ts';
import type { Value } from '../../src/lake/spec/types.ts';
import { EventLog } from '../../src/log/event-log.ts';
import type { Kind } from '../../src/log/schema.ts';
import { repoRoot, scratch } from '../helpers.ts';

export const fixtures = path.join(repoRoot, 'test', 'ingest', 'fixtures');

export async function freshLake(): Promise<{ log: EventLog; dir: string; cleanup: () => void }> {
  const s = scratch('mimir-ingest-');
  const log = await EventLog.open(path.join(s.dir, 'lake'));
  return { log, dir: s.dir, cleanup: () => { log.close(); s.cleanup(); } };
}

/** Copy fixture `name` into `dir` and return the copy's path. */
export function copyFixture(name: string, dir: string): string {
  const dst = path.join(dir, name);
  cpSync(path.join(fixtures, name), dst, { recursive: true });
  return dst;
}

/** The rows of one kind written by run `run`. */
export async function runRows(log: EventLog, kind: Kind, run: string): Promise<Record<string, Value>[]> {
  return log.rows(kind, { filter: eq('run', run) });
}

export async function countRunEvents(log: EventLog, run: string): Promise<number> {
  let n = 0;
  for (const k of ['node', 'edge', 'file'] as const) n += (await runRows(log, k, run)).length;
  return n;
}

/**
 * Write a generated crate `name` at `dir` (Cargo.toml + src/lib.rs): `fns`
 * functions in modules of 50, each calling the one before it, so that its
 * extraction takes a while and its events are many. `salt` changes every
 * body (an edit of every function).
 */
export function syntheticCrate(dir: string, name: string, version: string, fns: number, salt = 0): string {
  mkdirSync(path.join(dir, 'src'), { recursive: true });
  writeFileSync(path.join(dir, 'Cargo.toml'), `[package]\nname = "${name}"\nversion = "${version}"\nedition = "2021"\n`);
  const mods: string[] = [];
  for (let m = 0; m * 50 < fns; m++) {
    const body: string[] = [];
    for (let i = m * 50; i < Math.min(fns, (m + 1) * 50); i++) {
      const call = i % 50 === 0 ? '' : `f${i - 1}(x) + `;
      body.push(`    pub fn f${i}(x: u64) -> u64 { ${call}x * ${i + salt} }`);
    }
    mods.push(`pub mod m${m} {\n${body.join('\n')}\n}`);
  }
  writeFileSync(path.join(dir, 'src', 'lib.rs'), mods.join('\n\n') + '\n');
  return dir;
}

/** A one-package workspace folder holding a synthetic crate (see syntheticCrate). */
export function syntheticWorkspace(dir: string, name: string, fns: number, salt = 0): string {
  return syntheticCrate(dir, name, '0.1.0', fns, salt);
}
