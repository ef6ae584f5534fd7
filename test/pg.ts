// A throwaway PostgreSQL server for tests: a new cluster (initdb) in a temp
// folder, started (pg_ctl) on a free loopback port with trust auth and no
// fsync, one fresh database per `database()` call, stopped and removed by
// `stop()` (`-m immediate`: nothing in it is worth a checkpoint).
//
// initdb refuses to run as root, and tests run as root here and in CI: then
// the cluster belongs to the `postgres` system user (runuser), its folder
// chowned to it. Where the server cannot be started (no binaries, no such
// user), `startPostgres` returns the reason: under CI=true the test fails
// with it, elsewhere it is skipped with a loud message (`needPostgres`).
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import pg from 'pg';

/** Where Debian's postgresql puts initdb, pg_ctl and postgres: the newest major version (overridable: MIMIR_PG_BIN). */
const PG_BIN = process.env.MIMIR_PG_BIN ?? debianPgBin();

function debianPgBin(): string {
  const base = '/usr/lib/postgresql';
  const majors = existsSync(base) ? readdirSync(base).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)) : [];
  return path.join(base, majors[0] ?? '15', 'bin');
}

export interface PgServer {
  port: number;
  /** A URI for a new, empty database of its own. */
  database(name: string): Promise<string>;
  stop(): void;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** Run a PostgreSQL program, as the `postgres` user when this process is root. */
function runPg(asUser: boolean, prog: string, args: string[]): { status: number | null; out: string } {
  const cmd = asUser ? 'runuser' : path.join(PG_BIN, prog);
  const argv = asUser ? ['-u', 'postgres', '--', path.join(PG_BIN, prog), ...args] : args;
  const r = spawnSync(cmd, argv, { encoding: 'utf8', cwd: tmpdir() });
  return { status: r.status, out: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}` };
}

/** Start a throwaway server, or say why not. */
export async function startPostgres(): Promise<PgServer | { reason: string }> {
  for (const p of ['initdb', 'pg_ctl', 'postgres']) {
    if (!existsSync(path.join(PG_BIN, p))) return { reason: `no ${path.join(PG_BIN, p)} (install the Debian package postgresql, or set MIMIR_PG_BIN)` };
  }
  const root = process.getuid?.() === 0;
  const dir = mkdtempSync(path.join(tmpdir(), 'mimir-pg-'));
  const data = path.join(dir, 'data');
  if (root) {
    let uid: number;
    let gid: number;
    try {
      uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
      gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    } catch {
      rmSync(dir, { recursive: true, force: true });
      return { reason: 'running as root and there is no postgres user to own the cluster (initdb refuses root)' };
    }
    chownSync(dir, uid, gid);
  }
  const init = runPg(root, 'initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    return { reason: `initdb failed (${init.status}): ${init.out.trim().slice(-500)}` };
  }
  const port = await freePort();
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=100`;
  const start = runPg(root, 'pg_ctl', ['-D', data, '-o', opts, '-l', path.join(dir, 'server.log'), '-w', '-t', '120', 'start']);
  if (start.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    return { reason: `pg_ctl start failed (${start.status}): ${start.out.trim().slice(-500)}` };
  }
  let n = 0;
  return {
    port,
    async database(name: string): Promise<string> {
      const db = `${name.replace(/[^a-z0-9_]/gi, '_').toLowerCase()}_${++n}`;
      const c = new pg.Client({ connectionString: `postgresql://postgres@127.0.0.1:${port}/postgres` });
      await c.connect();
      try {
        await c.query(`CREATE DATABASE ${db}`);
      } finally {
        await c.end();
      }
      return `postgresql://postgres@127.0.0.1:${port}/${db}`;
    },
    stop(): void {
      runPg(root, 'pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The server for a test file, or undefined after saying loudly why the
 * PostgreSQL cases are skipped; under CI=true a server that cannot start is
 * an error.
 */
export async function needPostgres(): Promise<PgServer | undefined> {
  const s = await startPostgres();
  if ('port' in s) return s;
  if (process.env.CI === 'true') throw new Error(`PostgreSQL is needed by this test (CI=true) and could not be started: ${s.reason}`);
  console.error(`\n*** PostgreSQL cases SKIPPED: ${s.reason} ***\n`);
  return undefined;
}
