// A lake whose catalog is PostgreSQL (test/pg.ts) and whose tables live in
// object storage (`--warehouse s3://…`, s3rver: test/s3.ts). The real CLI
// ingests the sample workspace and answers `callers`, `state verify`,
// `lake check` and `table scan` exactly as the same commands on a local default lake; the
// table files are in the bucket and none under the local lake folder; a
// question through a proxy failing 30% of requests still answers the same,
// reading Parquet by ranges (never a whole data file); the warehouse is
// recorded in the catalog (a different one is refused), and the maintenance
// that walks local folders refuses such a lake, naming what is unsupported.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { scratch } from '../helpers.ts';
import { needPostgres, type PgServer } from '../pg.ts';
import { BUCKET, faultProxy, needS3, type S3Server } from '../s3.ts';
import { runCli, type CliResult } from '../cli/run-cli.ts';
import { S3FileIO } from '../../src/lake/io/s3.ts';

const work = scratch('mimir-s3-lake-');
let pgServer: PgServer | undefined;
let s3: S3Server | undefined;
before(async () => {
  s3 = await needS3();
  pgServer = await needPostgres();
});
after(() => {
  s3?.stop();
  pgServer?.stop();
  work.cleanup();
});

const ok = (r: CliResult): CliResult => {
  assert.equal(r.code, 0, `exit ${r.code}: ${r.stderr}`);
  return r;
};

/** JSON output without what differs between any two runs (times in ms) and the file locations (elsewhere by design). */
function comparable(stdout: string): unknown {
  return JSON.parse(stdout, (k, v: unknown) => (k === 'ms' || /Ms$/.test(k) ? undefined : v));
}

/** Every file below a folder (relative paths). */
function filesBelow(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string): void => {
    for (const e of readdirSync(d)) {
      const p = path.join(d, e);
      if (statSync(p).isDirectory()) walk(p, path.join(rel, e));
      else out.push(path.join(rel, e));
    }
  };
  walk(dir, '');
  return out;
}

test('--warehouse s3:// with a PostgreSQL catalog: ingest, callers, state verify and lake check answer as a local lake; no table file on the local disk', { timeout: 900_000 }, async (t) => {
  if (!s3 || !pgServer) return t.skip('no S3 or PostgreSQL server (see the messages above)');
  const uri = await pgServer.database('s3lake');
  const warehouse = `s3://${BUCKET}/lakes/one`;
  const s3Lake = path.join(work.dir, 'lake-s3');
  const localLake = path.join(work.dir, 'lake-local');
  const env = s3.env;
  const remote = ['--lake', s3Lake, '--catalog', uri];
  ok(await runCli(['ingest', 'samples/workspace', '--repo', 'sample', ...remote, '--warehouse', warehouse], { env }));
  ok(await runCli(['ingest', 'samples/workspace', '--repo', 'sample', '--lake', localLake]));

  // the tables are in the bucket, and nothing of theirs is on the local disk
  const io = new S3FileIO();
  Object.assign(process.env, env);
  const objects = await io.list(warehouse);
  assert.ok(objects.some((o) => o.path.endsWith('.parquet')) && objects.some((o) => o.path.endsWith('.metadata.json')), `table files in ${warehouse}`);
  // what must be local (locks, crash traces) is made when needed and gone after: nothing is left
  assert.deepEqual(filesBelow(s3Lake), [], 'no file under the local lake folder');

  // the same answers; later commands need no --warehouse (the catalog records it)
  for (const args of [['callers', 'fnvish::hash_str'], ['state', 'verify'], ['lake', 'check']]) {
    const fromS3 = ok(await runCli([...args, ...remote, '--json'], { env }));
    const fromLocal = ok(await runCli([...args, '--lake', localLake, '--json']));
    assert.notEqual(fromLocal.stdout.trim(), '', `${args.join(' ')} answers`);
    assert.deepEqual(comparable(fromS3.stdout), comparable(fromLocal.stdout), `${args.join(' ')}: same answer`);
  }

  // a table scan reads the same rows (run and time columns differ between two ingests by design)
  const scan = ['table', 'scan', 'lake:mimir.code_node_events', '-c', 'repo,krate,op,id,kind,qpath,file,line_start,line_end'];
  const sort = (r: CliResult): string[] => r.stdout.split('\n').filter((l) => l !== '').sort();
  const scanned = sort(ok(await runCli([...scan, ...remote], { env })));
  assert.ok(scanned.length > 10, `rows scanned: ${scanned.length}`);
  assert.deepEqual(scanned, sort(ok(await runCli([...scan, '--lake', localLake]))));

  // through a proxy failing 30% of requests: the same answer, Parquet read by ranges only
  const proxy = await faultProxy(s3.port, { rate: 0.3, seed: 7 });
  try {
    // a held request is given up after 5 s (s3rver answers in milliseconds, even at load 16)
    const viaProxy = { ...env, AWS_ENDPOINT_URL_S3: proxy.endpoint, MIMIR_S3_TIMEOUT_MS: '5000' };
    const fromS3 = ok(await runCli(['callers', 'fnvish::hash_str', ...remote, '--json'], { env: viaProxy }));
    const fromLocal = ok(await runCli(['callers', 'fnvish::hash_str', '--lake', localLake, '--json']));
    assert.deepEqual(comparable(fromS3.stdout), comparable(fromLocal.stdout));
    assert.ok(proxy.requests > 0 && Object.values(proxy.faults).some((n) => n > 0), `faults injected: ${JSON.stringify(proxy.faults)} of ${proxy.requests}`);
    const parquetGets = proxy.gets.filter((g) => g.path.endsWith('.parquet'));
    assert.ok(parquetGets.length > 0, 'the question read data files');
    assert.deepEqual(parquetGets.filter((g) => g.range === ''), [], 'every data-file read is a ranged GET');
    // bytes asked of each data file against its size: the footer and the pages read, not the file
    const sizes = new Map(objects.map((o) => [o.path.replace(/^s3:\/\//, '/'), o.size]));
    const asked = new Map<string, number>();
    for (const g of parquetGets) {
      const m = /^bytes=(\d+)-(\d+)$/.exec(g.range);
      assert.ok(m, `a range ${g.range}`);
      asked.set(g.path, (asked.get(g.path) ?? 0) + Number(m[2]) - Number(m[1]) + 1);
    }
    const report = [...asked].map(([p, n]) => `${p.split('/').slice(-3, -2)[0]}: ${n} of ${sizes.get(p)} bytes`);
    t.diagnostic(`data-file bytes asked by callers: ${report.join('; ')}`);
  } finally {
    await proxy.close();
  }

  // the warehouse is the lake's: another one is refused; so is one added to a lake that holds tables
  const other = await runCli(['callers', 'fnvish::hash_str', ...remote, '--warehouse', `s3://${BUCKET}/elsewhere`], { env });
  assert.equal(other.code, 1);
  assert.match(other.stderr, new RegExp(`records its tables in ${warehouse}, but the warehouse given is s3://${BUCKET}/elsewhere.*nothing opened`));
  const late = await runCli(['callers', 'fnvish::hash_str', '--lake', localLake, '--warehouse', `s3://${BUCKET}/late`], { env });
  assert.equal(late.code, 1);
  assert.match(late.stderr, /already holds \d+ table\(s\) .* a warehouse \(s3:\/\/mimir-test\/late\) is chosen when a lake is made, not added later — nothing changed/);

  // maintenance that walks local folders refuses, naming what is unsupported, and changes nothing
  const before = (await io.list(warehouse)).length;
  const gc = await runCli(['gc', ...remote], { env });
  assert.equal(gc.code, 1, gc.stderr);
  assert.match(gc.stderr, /gc \(its orphan file removal\) is not supported yet on a lake whose tables live in object storage \(s3:\/\/mimir-test\/lakes\/one\).*nothing done/);
  const relocate = await runCli(['lake', 'relocate', ...remote], { env });
  assert.equal(relocate.code, 1);
  assert.match(relocate.stderr, /lake relocate is not supported yet on a lake whose tables live in object storage/);
  assert.equal((await io.list(warehouse)).length, before, 'nothing deleted from the warehouse');
});
