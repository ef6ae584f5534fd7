// What the web tests share: a lake of the sample workspace (samples/workspace
// ingested as repo `sample` with its dependencies, so fnvish is in the
// universe and its callers in tally), the web UI built fresh into a folder of
// the test's (scripts/build-web.ts, the same build `npm run build` makes in
// dist/web/) and `mimir serve` on both, in this process, on a free port.
import { cpSync } from 'node:fs';
import * as path from 'node:path';
import { repoRoot, scratch } from '../helpers.ts';
import { runCli } from '../cli/run-cli.ts';
import { startServer, type RunningServer } from '../../src/serve/server.ts';
import { buildWeb, type WebBuild } from '../../scripts/build-web.ts';

export interface WebSetup {
  server: RunningServer;
  web: WebBuild;
  lake: string;
  dir: string;
  cleanup: () => Promise<void>;
}

export async function sampleWebServer(prefix: string): Promise<WebSetup> {
  const work = scratch(prefix);
  const lake = path.join(work.dir, 'lake');
  const ws = path.join(work.dir, 'ws');
  cpSync(path.join(repoRoot, 'samples', 'workspace'), ws, { recursive: true });
  const r = await runCli(['--lake', lake, 'ingest', ws, '--repo', 'sample', '--with-deps']);
  if (r.code !== 0) throw new Error(`ingesting the sample workspace failed (exit ${r.code}): ${r.stderr}`);
  const web = await buildWeb(path.join(work.dir, 'web'));
  const server = await startServer({ lake, port: 0, webDir: web.dir });
  return {
    server,
    web,
    lake,
    dir: work.dir,
    cleanup: async () => {
      await server.close();
      work.cleanup();
    },
  };
}
