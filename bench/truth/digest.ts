// The digest of one crate's oracle: the slim rustdoc (rustdoc.ts) and the
// MIR bodies that make calls (mir.ts), in one gzipped JSON file beside the
// raw outputs. Rebuilt from the raw outputs when absent or when DIGEST_VERSION
// (bumped whenever slimDoc or the MIR reader changes what they keep) differs,
// so a parser fix never needs the compiler again. Written to a temporary name
// and renamed: a crash leaves no partial digest.
import { createReadStream } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { createGunzip, gunzipSync, gzipSync } from 'node:zlib';
import { MirReader, type MirBody } from './mir.ts';
import type { OraclePaths } from './oracle.ts';
import { slimDoc, type DocCrate } from './rustdoc.ts';

export const DIGEST_VERSION = 5;

export interface Digest {
  version: number;
  doc: DocCrate;
  bodies: MirBody[];
}

export function digestPath(p: OraclePaths): string {
  return path.join(p.dir, `digest-v${DIGEST_VERSION}.json.gz`);
}

export async function loadDigest(p: OraclePaths): Promise<Digest> {
  const file = digestPath(p);
  try {
    const d = JSON.parse(gunzipSync(await readFile(file)).toString('utf8')) as Digest;
    if (d.version === DIGEST_VERSION) return d;
  } catch {
    // absent or unreadable: rebuild below
  }
  const raw = JSON.parse(gunzipSync(await readFile(p.rustdoc)).toString('utf8')) as Record<string, unknown>;
  const doc = slimDoc(raw);
  const bodies = await readMirFile(p.mir);
  const d: Digest = { version: DIGEST_VERSION, doc, bodies };
  await writeFile(`${file}.tmp`, gzipSync(JSON.stringify(d), { level: 6 }));
  await rename(`${file}.tmp`, file);
  return d;
}

/** The bodies with calls of a gzipped MIR file, read as a stream. */
export async function readMirFile(file: string): Promise<MirBody[]> {
  const bodies: MirBody[] = [];
  const reader = new MirReader((b) => { if (b.calls.length > 0) bodies.push(b); });
  const lines = createInterface({ input: createReadStream(file).pipe(createGunzip()), crlfDelay: Infinity });
  for await (const line of lines) reader.push(line);
  reader.finish();
  return bodies;
}
