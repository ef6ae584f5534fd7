// Regenerates crates.jsonl: 1,000 made-up crate releases, deterministic
// (a fixed-seed PRNG), so the demo prints the same rows on every machine.
// Usage: node samples/table/generate.mjs > samples/table/crates.jsonl
let state = 0x2545f491n;
const next = () => {
  // xorshift64*: 64-bit state kept in a BigInt
  state ^= state >> 12n;
  state ^= (state << 25n) & 0xffffffffffffffffn;
  state ^= state >> 27n;
  return (state * 0x2545f4914f6cdd1dn) & 0xffffffffffffffffn;
};
const rand = () => Number(next() >> 11n) / 2 ** 53;
const pick = (xs) => xs[Math.floor(rand() * xs.length)];

const stems = ['serde', 'tokio', 'rand', 'regex', 'clap', 'log', 'hyper', 'syn', 'quote', 'anyhow', 'thiserror', 'bytes',
  'futures', 'itertools', 'rayon', 'chrono', 'uuid', 'tracing', 'reqwest', 'axum', 'tower', 'mio', 'libc', 'memchr', 'once'];
const suffixes = ['', '-core', '-derive', '-util', '-macros', '-impl', '-sys', '-json', '-test', '-io'];
const licenses = ['MIT OR Apache-2.0', 'MIT', 'Apache-2.0', 'BSD-3-Clause', 'MPL-2.0', 'Unlicense OR MIT'];
const keywords = ['async', 'parser', 'cli', 'serialization', 'network', 'macro', 'no-std', 'web', 'database', 'crypto', 'time'];
const editions = [2015, 2018, 2021, 2021, 2021, 2024, 2024];

const seen = new Set();
const lines = [];
while (lines.length < 1000) {
  const name = pick(stems) + pick(suffixes);
  const version = `${Math.floor(rand() * 3)}.${Math.floor(rand() * 20)}.${Math.floor(rand() * 15)}`;
  if (seen.has(`${name}@${version}`)) continue;
  seen.add(`${name}@${version}`);
  const day = Math.floor(rand() * 3650); // ten years from 2015-05-15
  const published = new Date(Date.UTC(2015, 4, 15) + day * 86_400_000);
  const row = {
    name,
    version,
    // a 64-bit content fingerprint: most values are beyond 2^53, so only an exact reader keeps them
    fingerprint: `${BigInt.asIntN(64, next())}`,
    downloads: Math.floor(rand() ** 4 * 200_000_000),
    edition: pick(editions),
    license: rand() < 0.05 ? null : pick(licenses),
    published: published.toISOString().slice(0, 10),
    updated_at: new Date(published.getTime() + Math.floor(rand() * 86_400_000 * 30)).toISOString(),
    yanked: rand() < 0.03,
    size_bytes: Math.floor(rand() * 2_000_000) + 1_000,
    keywords: Array.from({ length: Math.floor(rand() * 4) }, () => pick(keywords)),
  };
  lines.push(JSON.stringify(row).replace(/"fingerprint":"(-?\d+)"/, '"fingerprint":$1'));
}
process.stdout.write(lines.join('\n') + '\n');
