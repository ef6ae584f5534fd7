// The `macro_rules!` transcriber: a rule's template and the matcher's
// bindings -> the expansion's tokens.
//
// As rustc: a repetition runs as many times as the repeating fragments inside
// it matched (all of them must agree), a fragment bound outside repetitions
// may be used inside any, `$name` with no binding is copied as written.
// Captured fragments other than `ident`, `lifetime`, `tt`, `literal` and
// `vis` come out as invisible groups (`nt` set) so that a later macro sees
// them as one opaque token, as rustc's interpolated tokens are. Tokens written
// in the template have no source position (line 0); `$crate` is tagged with
// the defining crate.
//
// Invariant: pure; output size is bounded by `budget` (a runaway template
// stops with an error, never a hang).
import type { Bound } from './matcher.ts';
import type { TemplateNode } from './rules.ts';
import type { Leaf, Token } from './tokens.ts';

export class TranscribeError extends Error {}

/** The token budget of one transcription was spent (see `transcribe`). */
export class SizeLimit extends TranscribeError {}

const TRANSPARENT = new Set(['ident', 'lifetime', 'tt', 'literal', 'vis']);

export interface TranscribeOptions {
  /** The crate whose macro this is (for `$crate`). */
  krate: string;
  /** Tokens this transcription may produce at most. */
  budget: number;
}

export function transcribe(template: TemplateNode[], bindings: Map<string, Bound>, opts: TranscribeOptions): Token[] {
  const t = new Transcriber(bindings, opts);
  return t.nodes(template, []);
}

class Transcriber {
  private produced = 0;

  constructor(private readonly bindings: Map<string, Bound>, private readonly opts: TranscribeOptions) {}

  private count(n: number) {
    this.produced += n;
    if (this.produced > this.opts.budget) throw new SizeLimit(`expansion over ${this.opts.budget} tokens`);
  }

  nodes(nodes: TemplateNode[], at: number[]): Token[] {
    const out: Token[] = [];
    for (const n of nodes) {
      switch (n.t) {
        case 'tok':
          this.count(1);
          out.push(defSite(n.tok));
          break;
        case 'crate':
          this.count(1);
          out.push({ k: 'crate', text: '$crate', line: 0, col: 0, krate: n.tok.krate ?? this.opts.krate });
          break;
        case 'group':
          this.count(1);
          out.push({ k: 'group', delim: n.delim, tokens: this.nodes(n.body, at), line: 0, col: 0, endLine: 0, endCol: 0 });
          break;
        case 'var': {
          const b = this.bindings.get(n.name);
          if (!b) {
            this.count(2);
            out.push({ k: 'punct', text: '$', line: 0, col: 0 }, defSite(n.tok));
            break;
          }
          const one = this.lookup(b, at);
          if (!one) throw new TranscribeError(`\`$${n.name}\` is still repeating at this depth`);
          this.count(one.one.length);
          if (TRANSPARENT.has(one.kind)) out.push(...one.one);
          else out.push({ k: 'group', delim: '', tokens: one.one, nt: one.kind, line: 0, col: 0, endLine: 0, endCol: 0 });
          break;
        }
        case 'rep': {
          const len = this.repeatCount(n.vars, at, n.op);
          for (let i = 0; i < len; i++) {
            if (i > 0 && n.sep) {
              this.count(1);
              out.push(defSite(n.sep));
            }
            out.push(...this.nodes(n.body, [...at, i]));
          }
          break;
        }
      }
    }
    return out;
  }

  /** The binding seen at repetition indices `at` (outermost first); null while still a sequence. */
  private lookup(b: Bound, at: number[]): Extract<Bound, { one: Token[] }> | null {
    let cur: Bound = b;
    for (const i of at) {
      if ('one' in cur) break;
      const next: Bound | undefined = cur.seq[i];
      if (!next) return null;
      cur = next;
    }
    return 'one' in cur ? cur : null;
  }

  private repeatCount(vars: string[], at: number[], op: string): number {
    let len: number | null = null;
    for (const name of vars) {
      const b = this.bindings.get(name);
      if (!b) continue;
      let cur: Bound = b;
      let deeper = true;
      for (const i of at) {
        if ('one' in cur) { deeper = false; break; }
        const next: Bound | undefined = cur.seq[i];
        if (!next) { deeper = false; break; }
        cur = next;
      }
      if (!deeper || 'one' in cur) continue;
      if (len === null) len = cur.seq.length;
      else if (len !== cur.seq.length) {
        throw new TranscribeError(`meta-variable \`$${name}\` repeats ${cur.seq.length} times, but another repeats ${len} times`);
      }
    }
    if (len === null) throw new TranscribeError('attempted to repeat an expression containing no syntax variables matched as repeating at this depth');
    if (op === '?' && len > 1) throw new TranscribeError(`\`$(…)?\` repeats ${len} times`);
    return len;
  }
}

function defSite(t: Leaf): Leaf {
  return t.line === 0 ? t : { k: t.k, text: t.text, line: 0, col: 0, ...(t.krate ? { krate: t.krate } : {}) };
}
