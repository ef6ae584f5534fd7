// Child process for compact.test.ts (not a test itself).
//   <lakeRoot> <tag> <rounds>: open the log and append `rounds` commits of node
//   events: 3 new repo rows, 1 new ring row (routed by the mode) and a `change`
//   of every shared id `s0..s4` (name `<tag>-r<round>`); print `done <rounds>`.
import { EventLog } from '../../src/log/event-log.ts';
import { UNIVERSE_REPO } from '../../src/log/schema.ts';

const [root, tag, roundsStr] = process.argv.slice(2);
const rounds = Number(roundsStr);
const log = await EventLog.open(root!);
const row = (repo: string, krate: string, id: string, op: string, name: string) => ({
  repo,
  krate,
  run: `child-${tag}`,
  ts: 1_700_000_000_000_000n,
  op,
  id,
  kind: 'fn',
  name,
});
for (let r = 0; r < rounds; r++) {
  const rows = [
    row('app', 'app@0.1.0', `${tag}-a${r}`, 'add', 'x'),
    row('lib', 'lib@0.2.0', `${tag}-l${r}`, 'add', 'x'),
    row('app', 'app@0.1.0', `${tag}-b${r}`, 'add', 'x'),
    row(UNIVERSE_REPO, 'dep@1.0.0', `${tag}-u${r}`, 'add', 'x'),
  ];
  for (let s = 0; s < 5; s++) rows.push(row(s % 2 ? 'lib' : 'app', s % 2 ? 'lib@0.2.0' : 'app@0.1.0', `s${s}`, 'change', `${tag}-r${String(r).padStart(4, '0')}`));
  await log.append('node', rows);
}
process.stdout.write(`done ${rounds}\n`);
log.close();
