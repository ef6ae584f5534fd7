// Helpers for the extract tests: the sample workspace and running extraction on it.
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { repoRoot } from '../helpers.ts';
import { extractCrate, readWorkspace, type CrateGraph, type Package } from '../../src/extract/index.ts';

export const sampleWorkspace = path.join(repoRoot, 'test', 'extract', 'fixtures', 'ws');

export async function extractPackage(pkg: Package, repo = 'sample', siblings: string[] = []): Promise<CrateGraph> {
  const deps = new Map(pkg.deps.map((d) => [d.localName, {
    krate: `${d.crateName}@${d.resolved ?? '0.0.0'}`,
    ...(siblings.includes(d.crateName) ? { repo } : {}),
  }]));
  return extractCrate({
    repo, krate: `${pkg.name}@${pkg.version}`, rootDir: pkg.dir,
    targets: pkg.targets.map((t) => t.path), deps, readFile: (p) => readFile(p),
  });
}

export async function samplePackage(name: string, dir = sampleWorkspace): Promise<Package> {
  const ws = await readWorkspace(dir);
  const pkg = ws.packages.find((p) => p.name === name);
  if (!pkg) throw new Error(`sample workspace ${dir} has no package ${name}`);
  return pkg;
}
