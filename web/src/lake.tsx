// `/lake`: what the lake holds at the page's generation — the repos and their
// crates, the universe's crates, the tables, the newest generations (each a
// link that reads the lake as of it) and ingest runs.
import type { JSX } from 'preact';
import { useEffect } from 'preact/hooks';
import { api, type LakeAnswer } from './api.ts';
import { ErrorView, Loading, useApi } from './common.tsx';
import { Link, href, type Place } from './router.tsx';

const n = (v: number | null): string => (v === null ? '–' : v.toLocaleString('en'));
const time = (ms: number): string => new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');

export function LakePage(props: { place: Place }): JSX.Element {
  const asOf = props.place.params.get('asOf');
  const r = useApi<LakeAnswer>(JSON.stringify(['lake', asOf]), (signal) => api('lake', { generations: 20, runs: 20 }, signal));
  useEffect(() => {
    document.title = 'The lake — Mimir';
  }, []);
  if (r.state === 'loading') return <main><Loading what="the lake" /></main>;
  if (r.state === 'failed') return <main><h1>The lake</h1><ErrorView error={r.error} /></main>;
  const l = r.value;
  const repos = new Map<string, string[]>();
  for (const c of l.crates) repos.set(c.repo, [...(repos.get(c.repo) ?? []), c.krate]);
  const universe = repos.get('@universe') ?? [];
  repos.delete('@universe');
  return (
    <main class="lake">
      <h1>The lake</h1>
      <dl class="facts">
        <dt>Folder</dt>
        <dd><code>{l.root}</code></dd>
        <dt>Generation</dt>
        <dd>
          {l.generation}
          {l.generation !== l.pointerGeneration && <> (as of; the lake is now at {l.pointerGeneration})</>}
        </dd>
        <dt>Ring</dt>
        <dd>{l.ringMode}</dd>
      </dl>
      <section aria-labelledby="repos-h">
        <h2 id="repos-h">Repos ({repos.size})</h2>
        {repos.size === 0 ? <p class="muted">No repo is ingested.</p> : (
          <ul class="plain">
            {[...repos].map(([repo, crates]) => (
              <li key={repo}>
                <Link href={href('/search', { repo })}><strong>{repo}</strong></Link>: {crates.map((k, i) => <span key={k}>{i > 0 && ', '}<Link href={href('/search', { repo, krate: k })}>{k}</Link></span>)}
              </li>
            ))}
          </ul>
        )}
      </section>
      <section aria-labelledby="universe-h">
        <h2 id="universe-h">Universe crates ({universe.length})</h2>
        <p class="muted">The dependency crates, each version indexed once for every repo.</p>
        {universe.length > 0 && <ul class="plain cols">{universe.map((k) => <li key={k}><Link href={href('/search', { repo: '@universe', krate: k })}>{k}</Link></li>)}</ul>}
      </section>
      <section aria-labelledby="tables-h">
        <h2 id="tables-h">Tables ({l.tables.length})</h2>
        <div class="scroll">
          <table>
            <thead><tr><th scope="col">Table</th><th scope="col" class="num">Rows</th><th scope="col" class="num">Data files</th><th scope="col" class="num">Delete files</th><th scope="col" class="num">Snapshots</th></tr></thead>
            <tbody>
              {l.tables.map((t) => (
                <tr key={t.table}><td><code>{t.table}</code></td><td class="num">{n(t.records)}</td><td class="num">{n(t.dataFiles)}</td><td class="num">{n(t.deleteFiles)}</td><td class="num">{n(t.snapshots)}</td></tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
      <section aria-labelledby="gens-h">
        <h2 id="gens-h">Newest generations</h2>
        <div class="scroll">
          <table>
            <thead><tr><th scope="col">Generation</th><th scope="col">Time (UTC)</th><th scope="col">Note</th><th scope="col">Tables</th></tr></thead>
            <tbody>
              {l.generations.map((g) => (
                <tr key={g.generation}>
                  <td><Link href={href('/lake', { asOf: g.generation })} title="read the lake as of this generation">{g.generation}</Link></td>
                  <td>{time(g.timeMs)}</td>
                  <td>{g.note ?? ''}</td>
                  <td>{g.tables.length}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
      <section aria-labelledby="runs-h">
        <h2 id="runs-h">Newest ingest runs</h2>
        {l.runs.length === 0 ? <p class="muted">None.</p> : (
          <div class="scroll">
            <table>
              <thead><tr><th scope="col">Run</th><th scope="col">Repo</th><th scope="col">Commit</th><th scope="col">Status</th><th scope="col" class="num">Events</th></tr></thead>
              <tbody>
                {l.runs.map((run) => (
                  <tr key={run.run}><td><code>{run.run}</code></td><td>{run.repo}</td><td><code>{run.rev?.slice(0, 12) ?? '–'}</code></td><td>{run.status ?? '–'}</td><td class="num">{n(run.events)}</td></tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </main>
  );
}
