// The ring split and its reverse.
//
// splitRing copies the ring (rows whose repo is `@universe`) out of each
// source table into its ring table, verifies per krate (counts and content
// digests) that the ring tables hold exactly the source tables' ring rows, and
// switches the lake to split (`mimir.ring = split` on the node source table).
// Nothing is deleted: old ring rows stay in the source tables until compaction
// drops them, and split reads never count them (they read source rows whose
// repo is not `@universe`).
//
// Invariants:
// - Memory is bounded by chunkRows and the writer's row group, never by the
//   ring: the copy streams the scan into the writer a chunk at a time.
// - No lost row: the copy reads the source at the snapshot S0 it started
//   from, then catches up the data files appended since (the source's history
//   between two snapshots is append-only, so new rows are exactly the files
//   live now and not then). The switch is one metadata commit at the very end:
//   one multi-table catalog commit that sets the property on the node table and
//   asserts every source table (and ring table) still sits at the snapshot last
//   caught up; an append in between fails the guard and we catch up again.
//   Appends after the switch are routed to the ring tables by EventLog.append's
//   own mode guard.
// - No livelock: when an append beat the switch `freezeAfter` times (default
//   1), the split first freezes appends — an extra, earlier metadata commit
//   setting `mimir.ring.freeze` on the node table to the id of a catalog lease
//   this run holds (and renews). Every append commit asserts the node table and
//   waits while that lease is live, so after the freeze nothing can land; the
//   final catch-up is finite and the switch (which also removes the freeze)
//   cannot lose its guard to an append. Catch-up rounds before the freeze still
//   do the bulk of the copying while appends flow; the freeze only spans the
//   last catch-up and the switch. A quiet lake never freezes.
// - A non-append change of a source table since S0 (a compaction rewrite) makes
//   the catch-up fall back to full stats, and a recopy if they differ.
//
// Crash story: until the switch commit the lake is unified and reads only the
// source tables, so copied chunks, emptied ring tables and catch-up copies
// change no read; rerunning compares the ring table with the source and skips
// or empties and copies again. The switch is a single catalog commit: before
// it, unified; after it, split with the ring tables holding every ring row.
// unsplitRing works the same way in reverse (freezing too: appends to a split
// lake land in the ring tables it asserts): while it copies back the lake is
// still split and split reads ignore the source tables' ring rows, so partial
// copies are invisible; the switch back is one commit asserting the ring
// tables unchanged since they were copied. A failure after the freeze removes
// it (best effort); a crash leaves a freeze whose lease died with the process:
// appenders ignore it and the next split or unsplit clears it. Files left by a
// crash before their commit are orphans for GC.
import type { Batch } from '../lake/spec/types.ts';
import type { Table } from '../lake/table/table.ts';
import { removePropertiesUpdate, setPropertiesUpdate } from '../lake/table/table.ts';
import type { TableMetadata } from '../lake/spec/types.ts';
import { TableScan, type ScanOptions } from '../lake/scan/scan.ts';
import type { FileTask } from '../lake/scan/plan.ts';
import { ValidationError, checkUpdate, metadataUpdate, type CommitTarget, type TableUpdate } from '../lake/table/commit.ts';
import { and, eq, inList, ne, or, not, type Expr } from '../lake/expr/expr.ts';
import { crashPoint } from '../lake/testing/crash.ts';
import { EventLog, PinnedError, guarded, isRingSplit, ringFreeze } from './event-log.ts';
import { COL_KRATE, COL_REPO, CODE_NODE_EVENTS, PROP_RING, PROP_RING_FREEZE, RING_SPLIT, SOURCE_KINDS, UNIVERSE_REPO, ident, qualified, ringTableName, tableName, type Kind } from './schema.ts';
import { StatsAccumulator, compareStats, krateStats, mergeStats, ownerCount, type KrateStats } from './digest.ts';

export interface SplitOptions {
  /** Rows per append while copying (bounds memory: about 200 B a row). Default 1 << 20. */
  chunkRows?: number;
  /** Test hook: stop after the copy, nothing switched. */
  failAfterCopy?: boolean;
  /** Catch-up rounds before giving up on a switch (default 20). */
  maxRounds?: number;
  /**
   * Switch attempts without a freeze before freezing appends for the final
   * catch-up and switch (default 1: freeze once an append beat the switch; 0:
   * always freeze).
   */
  freezeAfter?: number;
  /**
   * Test hooks: run after the copy, and before each switch attempt (round from
   * 0; in a frozen round after the freeze, so an append there waits).
   */
  testHooks?: { afterCopy?: () => Promise<void>; beforeSwitch?: (round: number) => Promise<void> };
}

export interface SplitReport {
  /** Ring rows copied into the ring tables by this run (catch-up included). */
  copied: bigint;
  /** Ring rows the ring tables hold at the switch (every kind). */
  verified: bigint;
  /** Ring tables this run emptied and copied again. */
  recopied: number;
  /** Did this run switch the lake? */
  switched: boolean;
  ms: number;
  /** Of `copied`, rows copied by catch-up rounds (committed after the copy began). */
  caughtUp: bigint;
  /** Switch attempts (1 when no append raced the switch). */
  rounds: number;
  /** Did this run freeze appends for its final catch-up and switch? */
  frozen: boolean;
}

export interface UnsplitReport {
  /** Ring rows appended back to the source tables. */
  copiedBack: bigint;
  /** Did this run switch the lake back to unified? */
  switched: boolean;
  ms: number;
  /** Source files rewritten without stale ring rows of a krate copied back. */
  rewrittenFiles: number;
  /** Switch attempts (1 when no append raced the switch back). */
  rounds: number;
  /** Did this run freeze appends for its final copy-back and switch? */
  frozen: boolean;
}

export function formatSplitReport(r: SplitReport): string {
  return `ring split: copied ${r.copied} row(s) (recopied ${r.recopied} table(s)), ${r.verified} ring row(s) verified, ${r.switched ? 'switched' : 'not switched (was split already)'} in ${r.ms} ms`;
}

export function formatUnsplitReport(r: UnsplitReport): string {
  return `ring unsplit: copied back ${r.copiedBack} row(s) (rewrote ${r.rewrittenFiles} file(s)), ${r.switched ? 'switched back' : 'not switched (was unified already)'} in ${r.ms} ms`;
}

/** Reports as JSON with bigints as integers. */
export function reportJson(r: SplitReport | UnsplitReport): string {
  return JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? `\u0000${v}\u0000` : v)).replace(/"\\u0000(-?\d+)\\u0000"/g, '$1');
}

/** A table changed between the last catch-up and the switch: catch up again. */
class Moved extends ValidationError {}

const RING_FILTER: Expr = eq(COL_REPO, UNIVERSE_REPO);
const DEFAULT_CHUNK = 1 << 20;
const DEFAULT_ROUNDS = 20;
const DEFAULT_FREEZE_AFTER = 1;
/** How often a held freeze's lease is renewed (its ttl is minutes). */
const FREEZE_RENEW_MS = 20_000;

// ---- the freeze -----------------------------------------------------------------

/** A freeze this run holds: its lease id (the property's value) and the lease's end. */
interface HeldFreeze {
  id: bigint;
  end(): void;
}

/** Refuse when another run's live freeze sits on the node table. */
function refuseForeignFreeze(log: EventLog, op: string, base: TableMetadata, mine: bigint | undefined): void {
  const f = ringFreeze(log.lake, base);
  if (f?.live && f.lease !== mine) {
    throw new Error(`${op}: another ring split or unsplit holds the freeze on ${qualified(CODE_NODE_EVENTS)} (lease ${f.raw}, live) — not switched; run it again when that one has finished`);
  }
}

/**
 * Freeze appends: take a catalog lease (renewed until `end`) and set its id as
 * `mimir.ring.freeze` on the node table in one metadata commit (guarded by
 * `check` and refusing another run's live freeze). From this commit on no
 * append lands anywhere while the lease lives.
 */
async function takeFreeze(log: EventLog, op: string, check: (base: TableMetadata) => void): Promise<HeldFreeze> {
  const { catalog } = log.lake;
  const lease = catalog.beginLease({ releaseBase: catalog.pointerGeneration(), note: `${op === 'split_ring' ? 'ring split' : 'ring unsplit'} freeze` });
  const timer = setInterval(() => {
    try {
      lease.renew();
    } catch {
      // expired and swept: the freeze is dead, appends flow again; the switch's guard still holds
    }
  }, FREEZE_RENEW_MS);
  timer.unref();
  const held: HeldFreeze = {
    id: lease.id,
    end: () => {
      clearInterval(timer);
      lease.end();
    },
  };
  try {
    await log.commit(`ring: freeze appends (${op})`, async () => {
      const update = guarded(setPropertiesUpdate({ [PROP_RING_FREEZE]: String(lease.id) }), (base) => {
        refuseForeignFreeze(log, op, base, lease.id);
        check(base);
      });
      await log.lake.commit([{ ident: ident(CODE_NODE_EVENTS), update }], `ring: freeze appends (${op})`);
    });
  } catch (e) {
    held.end();
    throw e;
  }
  return held;
}

/** Remove our freeze (if it is still ours) and end its lease; best effort, never throws. */
async function releaseFreeze(log: EventLog, held: HeldFreeze): Promise<void> {
  try {
    const mine = String(held.id);
    const node = (await log.table(CODE_NODE_EVENTS))!;
    if (node.metadata.properties[PROP_RING_FREEZE] !== mine) return;
    await log.commit('ring: end the freeze', async () => {
      const update = guarded(removePropertiesUpdate([PROP_RING_FREEZE]), (base) => {
        if (base.properties[PROP_RING_FREEZE] !== mine) throw new Moved(`the freeze on ${qualified(CODE_NODE_EVENTS)} is no longer lease ${mine}`);
      });
      await log.lake.commit([{ ident: ident(CODE_NODE_EVENTS), update }], 'ring: end the freeze');
    });
  } catch {
    // the lease ends below: appenders ignore a dead freeze and the next run clears it
  } finally {
    held.end();
  }
}

/** Clear a freeze left by a killed run (its lease dead). A live one is left alone. */
async function clearDeadFreeze(log: EventLog, point: string): Promise<void> {
  const node = (await log.table(CODE_NODE_EVENTS))!;
  const f = ringFreeze(log.lake, node.metadata);
  if (!f || f.live) return;
  await log.commit('ring: clear a dead freeze', async () => {
    const update = guarded(removePropertiesUpdate([PROP_RING_FREEZE]), (base) => {
      const now = ringFreeze(log.lake, base);
      if (now?.raw !== f.raw || now.live) throw new Moved(`the freeze on ${qualified(CODE_NODE_EVENTS)} changed`);
    });
    await log.lake.commit([{ ident: ident(CODE_NODE_EVENTS), update }], 'ring: clear a dead freeze');
  }).catch((e: unknown) => {
    if (!(e instanceof Moved)) throw e;
  });
  crashPoint(point);
}

// ---- scanning helpers ---------------------------------------------------------

/**
 * A scan of the snapshot's data files (only those in `keep`, when given) in
 * commit order: by data sequence number, oldest first (a stable sort keeps
 * the plan's order within one). A copy lands its rows at one new sequence
 * number per chunk, where the fold's tie-break is row order; copying in the
 * plan's order (newest manifests first) put an id's `remove` before its `add`
 * and brought removed items back.
 */
class CopyScan extends TableScan {
  private keep: Set<string> | undefined;
  static of(t: Table, opts: ScanOptions, keep?: Set<string>): CopyScan {
    const s = new CopyScan(t.io, t.metadata, t.snapshot(opts), opts);
    s.keep = keep;
    return s;
  }
  override async planFiles(): Promise<FileTask[]> {
    const keep = this.keep;
    const tasks = (await super.planFiles()).filter((t) => !keep || keep.has(t.file.filePath));
    return tasks.sort((a, b) => (a.dataSequenceNumber < b.dataSequenceNumber ? -1 : a.dataSequenceNumber > b.dataSequenceNumber ? 1 : 0));
  }
}

/** The rows a copy reads: `t` as of a snapshot, in commit order (CopyScan), streamed. */
function copySource(t: Table, snapshotId: bigint | undefined, filter?: Expr, keep?: Set<string>): AsyncIterable<Batch> {
  if (snapshotId === undefined) return (async function* () {})();
  return CopyScan.of(t, { snapshotId, filter }, keep).batches();
}

async function liveFiles(t: Table, snapshotId: bigint | undefined): Promise<Map<string, bigint>> {
  const out = new Map<string, bigint>();
  if (snapshotId === undefined) return out;
  for (const f of await t.dataFiles({ snapshotId })) out.set(f.file.filePath, f.sequenceNumber);
  return out;
}

/**
 * Is the history from `from` to `to` made of appends only (so rows added are
 * the files live at `to` and not at `from`)? False when `from` is not an
 * ancestor of `to` (expired, or a rollback).
 */
function appendOnly(t: Table, from: bigint | undefined, to: bigint | undefined): boolean {
  if (to === undefined) return from === undefined;
  const byId = new Map(t.metadata.snapshots.map((s) => [s.snapshotId, s]));
  let cur: bigint | undefined = to;
  while (cur !== undefined && cur !== from) {
    const s = byId.get(cur);
    if (!s) return false;
    if (s.summary.operation !== 'append') return false;
    cur = s.parentSnapshotId;
  }
  return cur === from;
}

/** Rows of a table as of a snapshot (ring rows only when `ring`), streamed. */
function scanAt(t: Table, snapshotId: bigint | undefined, filter?: Expr): AsyncIterable<Batch> {
  if (snapshotId === undefined) return (async function* () {})();
  return t.scan({ snapshotId, filter }).batches();
}

function sliceBatch(b: Batch, from: number, to: number): Batch {
  return { fields: b.fields, numRows: to - from, columns: b.columns.map((c) => c.slice(from, to)) };
}

/**
 * Append the rows of `source` to table `name`, at most `chunkRows` rows per
 * commit, each commit through the log's discipline. The scan streams straight
 * into the writer: nothing but the current batch and the writer's row group is
 * held. Returns the rows appended and their stats (as read from the source).
 */
async function copyRows(
  log: EventLog,
  name: string,
  kind: Kind,
  source: AsyncIterable<Batch>,
  chunkRows: number,
  point: string,
): Promise<{ rows: bigint; stats: KrateStats; commits: number }> {
  const it = source[Symbol.asyncIterator]();
  const acc = new StatsAccumulator();
  let pending: Batch | undefined;
  let done = false;
  let rows = 0n;
  let commits = 0;
  while (!done) {
    let n = 0;
    const chunk = async function* (): AsyncGenerator<Batch> {
      while (n < chunkRows) {
        let b = pending;
        pending = undefined;
        if (!b) {
          const r = await it.next();
          if (r.done) {
            done = true;
            return;
          }
          b = { fields: r.value.fields, numRows: r.value.numRows, columns: r.value.columns };
        }
        if (b.numRows === 0) continue;
        if (n + b.numRows > chunkRows) {
          const k = chunkRows - n;
          pending = sliceBatch(b, k, b.numRows);
          b = sliceBatch(b, 0, k);
        }
        n += b.numRows;
        acc.add(b);
        yield b;
      }
    };
    const landed = await log.commit(`ring: copy into ${qualified(name)}`, async () => {
      const t = (await log.table(name))!;
      const files = await t.writeDataFiles(chunk());
      if (n === 0) {
        for (const f of files) await t.io.delete(f.file.filePath).catch(() => undefined);
        return false;
      }
      try {
        await t.commit(t.appendUpdate(files, { 'mimir.kind': kind, 'mimir.ring-copy': String(n) }), `ring: copy ${n} row(s) into ${qualified(name)}`);
      } catch (e) {
        for (const f of files) await t.io.delete(f.file.filePath).catch(() => undefined);
        throw e;
      }
      return true;
    });
    if (landed) {
      rows += BigInt(n);
      commits++;
      crashPoint(point);
    }
    if (n < chunkRows) done = true;
  }
  return { rows, stats: acc.stats(), commits };
}

/** Empty a table in one overwrite commit (every live file removed). */
async function emptyTable(log: EventLog, name: string): Promise<void> {
  await log.commit(`ring: empty ${qualified(name)}`, async () => {
    const t = (await log.table(name))!;
    const live = await t.dataFiles();
    if (live.length === 0) return;
    await t.commit(t.overwriteUpdate(live.map((f) => f.file), [], 'overwrite'), `ring: empty ${qualified(name)} before copying again`);
  });
}

function mismatchMessage(op: string, srcName: string, expected: KrateStats, ringName: string, have: KrateStats, suffix: string): string {
  const cmp = compareStats(expected, have);
  const base = `${op}: ${qualified(srcName)} holds ${cmp.totalExpected} ring row(s) in ${ownerCount(expected)} owner(s), ${qualified(ringName)} holds ${cmp.totalHave} in ${ownerCount(have)}`;
  const countsDiffer = cmp.differing.some((k) => (expected.get(k)?.rows ?? 0n) !== (have.get(k)?.rows ?? 0n));
  const shown = cmp.differing.slice(0, 5).join(', ') + (cmp.differing.length > 5 ? ', …' : '');
  if (countsDiffer) return `${base} — ${suffix}`; // the seed's words, exactly
  return `${base}, but the content digests differ for ${cmp.differing.length} krate(s): ${shown} — ${suffix}`;
}

// ---- split --------------------------------------------------------------------

interface KindState {
  /** Source snapshot whose ring rows the ring table holds (after the last catch-up). */
  srcSnap: bigint | undefined;
  /** Stats of the source's ring rows at srcSnap. */
  expected: KrateStats;
  /** Ring snapshot `ringStats` describe; undefined = to be read in full. */
  ringSnap: bigint | undefined;
  ringStats: KrateStats;
}

/** Copy the ring out of the source tables, verify, switch (see the module comment). */
export async function splitRing(log: EventLog, opts: SplitOptions = {}): Promise<SplitReport> {
  const t0 = Date.now();
  if (log.isPinned) throw new PinnedError('a pinned read handle cannot split the log');
  const chunkRows = Math.max(1, Math.floor(opts.chunkRows ?? DEFAULT_CHUNK));
  const maxRounds = opts.maxRounds ?? DEFAULT_ROUNDS;
  const freezeAfter = opts.freezeAfter ?? DEFAULT_FREEZE_AFTER;
  const report: SplitReport = { copied: 0n, verified: 0n, recopied: 0, switched: false, ms: 0, caughtUp: 0n, rounds: 0, frozen: false };
  const done = (): SplitReport => ({ ...report, ms: Date.now() - t0 });
  await clearDeadFreeze(log, 'split:freeze-cleared');
  if (await log.ringSplit()) return done();
  crashPoint('split:start');

  // 1. copy, per kind, the source's ring rows as of the snapshot read now
  const state = new Map<Kind, KindState>();
  for (const kind of SOURCE_KINDS) {
    const src = (await log.table(tableName(kind)))!;
    const ring = (await log.table(ringTableName(kind)))!;
    const s0 = src.currentSnapshot()?.snapshotId;
    const have = await krateStats(scanAt(ring, ring.currentSnapshot()?.snapshotId));
    let expected: KrateStats;
    let haveRows = 0n;
    for (const v of have.values()) haveRows += v.rows;
    if (haveRows > 0n) {
      expected = await krateStats(scanAt(src, s0, RING_FILTER), { repo: UNIVERSE_REPO });
      if (compareStats(expected, have).equal) {
        // the ring table holds exactly these ring rows already: skip
        state.set(kind, { srcSnap: s0, expected, ringSnap: ring.currentSnapshot()?.snapshotId, ringStats: have });
        crashPoint('split:skip-kind');
        continue;
      }
      // it holds some of them (a crash mid-copy): empty it and copy again
      await emptyTable(log, ringTableName(kind));
      report.recopied += 1;
      crashPoint('split:after-empty');
    }
    const res = await copyRows(log, ringTableName(kind), kind, copySource(src, s0, RING_FILTER), chunkRows, 'split:after-copy-chunk');
    report.copied += res.rows;
    state.set(kind, { srcSnap: s0, expected: res.stats, ringSnap: undefined, ringStats: new Map() });
    crashPoint('split:after-copy-kind');
  }
  crashPoint('split:after-copy');
  await opts.testHooks?.afterCopy?.();
  if (opts.failAfterCopy) {
    throw new Error(`split_ring: fail_after_copy (test hook) — copied ${report.copied} row(s), nothing switched`);
  }

  // 2. catch up, verify, switch — again while appends race the switch; once
  // they have beaten it `freezeAfter` times, freeze them for the last round
  let held: HeldFreeze | undefined;
  try {
    for (let round = 0; ; round++) {
      if (round >= maxRounds) {
        throw new Error(
          `split_ring: the source tables kept changing: ${maxRounds} catch-up round(s) without a quiet moment to switch (copied ${report.copied} row(s)) — not switched; run it again`,
        );
      }
      report.rounds = round + 1;
      if (!held && round >= freezeAfter) {
        try {
          held = await takeFreeze(log, 'split_ring', (base) => {
            if (isRingSplit(base)) throw new Moved('the lake was split by someone else');
          });
        } catch (e) {
          if (e instanceof Moved && (await log.ringSplit())) return done();
          throw e;
        }
        report.frozen = true;
        crashPoint('split:frozen');
      }
      for (const kind of SOURCE_KINDS) await catchUp(log, kind, state.get(kind)!, chunkRows, report);
      crashPoint(held ? 'split:after-final-catch-up' : 'split:after-catch-up');
      // verify: per krate, counts and digests
      report.verified = 0n;
      for (const kind of SOURCE_KINDS) {
        const st = state.get(kind)!;
        if (!compareStats(st.expected, st.ringStats).equal) {
          throw new Error(mismatchMessage('split_ring', tableName(kind), st.expected, ringTableName(kind), st.ringStats, 'not switched'));
        }
        for (const v of st.ringStats.values()) report.verified += v.rows;
      }
      crashPoint('split:before-switch');
      await opts.testHooks?.beforeSwitch?.(round);
      try {
        await switchSplit(log, state, held?.id);
      } catch (e) {
        if (e instanceof Moved) {
          // frozen, only a non-append change (a compaction) can move a source table
          crashPoint('split:switch-moved');
          continue;
        }
        throw e;
      }
      held?.end(); // the switch removed the freeze
      held = undefined;
      crashPoint('split:after-switch');
      report.switched = true;
      return done();
    }
  } finally {
    if (held) {
      await releaseFreeze(log, held);
      crashPoint('split:freeze-released');
    }
  }
}

/** Bring a kind's ring table up to the source's current snapshot, and its ring stats up to date. */
async function catchUp(log: EventLog, kind: Kind, st: KindState, chunkRows: number, report: SplitReport): Promise<void> {
  const src = (await log.table(tableName(kind)))!;
  const cur = src.currentSnapshot()?.snapshotId;
  if (cur !== st.srcSnap) {
    if (appendOnly(src, st.srcSnap, cur)) {
      const before = await liveFiles(src, st.srcSnap);
      const added = new Set([...(await liveFiles(src, cur)).keys()].filter((f) => !before.has(f)));
      if (added.size > 0) {
        const res = await copyRows(log, ringTableName(kind), kind, copySource(src, cur, RING_FILTER, added), chunkRows, 'split:after-catch-up-chunk');
        st.expected = mergeStats(st.expected, res.stats);
        report.copied += res.rows;
        report.caughtUp += res.rows;
      }
    } else {
      // rewritten (compaction, a delete) since we read it: start from its rows now
      st.expected = await krateStats(scanAt(src, cur, RING_FILTER), { repo: UNIVERSE_REPO });
      const ring = (await log.table(ringTableName(kind)))!;
      const have = await krateStats(scanAt(ring, ring.currentSnapshot()?.snapshotId));
      if (!compareStats(st.expected, have).equal) {
        await emptyTable(log, ringTableName(kind));
        report.recopied += 1;
        crashPoint('split:after-empty');
        const res = await copyRows(log, ringTableName(kind), kind, copySource(src, cur, RING_FILTER), chunkRows, 'split:after-copy-chunk');
        report.copied += res.rows;
      }
      st.ringSnap = undefined;
    }
    st.srcSnap = cur;
    crashPoint('split:catch-up-kind');
  }
  // the ring side, read back from the ring table itself
  const ring = (await log.table(ringTableName(kind)))!;
  const rcur = ring.currentSnapshot()?.snapshotId;
  if (st.ringSnap === undefined && rcur !== undefined) {
    st.ringStats = await krateStats(scanAt(ring, rcur));
  } else if (rcur !== st.ringSnap) {
    if (appendOnly(ring, st.ringSnap, rcur)) {
      const before = await liveFiles(ring, st.ringSnap);
      const added = new Set([...(await liveFiles(ring, rcur)).keys()].filter((f) => !before.has(f)));
      st.ringStats = mergeStats(st.ringStats, await krateStats(CopyScan.of(ring, { snapshotId: rcur }, added).batches()));
    } else {
      st.ringStats = await krateStats(scanAt(ring, rcur));
    }
  }
  st.ringSnap = rcur;
}

/**
 * One catalog commit: the property on the node table (and our freeze off it),
 * every source and ring table asserted where we left it.
 */
async function switchSplit(log: EventLog, state: Map<Kind, KindState>, freeze: bigint | undefined): Promise<void> {
  await log.commit('ring: switch to split', async () => {
    const targets: Omit<CommitTarget, 'io'>[] = [];
    for (const kind of SOURCE_KINDS) {
      const st = state.get(kind)!;
      const srcCheck = (base: { currentSnapshotId?: bigint }): void => {
        if (base.currentSnapshotId !== st.srcSnap) {
          throw new Moved(`${qualified(tableName(kind))} moved to snapshot ${base.currentSnapshotId} after the catch-up to ${st.srcSnap}`);
        }
      };
      if (tableName(kind) === CODE_NODE_EVENTS) {
        const check = (base: TableMetadata): void => {
          refuseForeignFreeze(log, 'split_ring', base, freeze);
          srcCheck(base);
        };
        targets.push({ ident: ident(CODE_NODE_EVENTS), update: guarded(switchUpdate({ [PROP_RING]: RING_SPLIT }, []), check) });
      } else {
        targets.push({ ident: ident(tableName(kind)), update: checkUpdate(srcCheck), assertOnly: true });
      }
      targets.push({
        ident: ident(ringTableName(kind)),
        assertOnly: true,
        update: checkUpdate((base) => {
          if (base.currentSnapshotId !== st.ringSnap) throw new Moved(`${qualified(ringTableName(kind))} changed after it was verified`);
        }),
      });
    }
    await log.lake.commit(targets, 'ring: switch to split');
  });
}

/** Set `set`, remove `remove` and the freeze property, in one metadata update. */
function switchUpdate(set: Record<string, string>, remove: string[]): TableUpdate {
  return metadataUpdate((base) => {
    const properties = { ...base.properties, ...set };
    for (const k of [...remove, PROP_RING_FREEZE]) delete properties[k];
    return { ...base, properties };
  });
}

// ---- unsplit ------------------------------------------------------------------

/**
 * Copy back to the source tables the ring rows they lack (ring rows ingested
 * after the split), then switch back to unified in one commit that asserts the
 * ring tables unchanged since the copy — freezing appends for the last round
 * once they have beaten the switch `freezeAfter` times. A no-op on a unified
 * lake.
 */
export async function unsplitRing(log: EventLog, opts: { chunkRows?: number; maxRounds?: number; freezeAfter?: number } = {}): Promise<UnsplitReport> {
  const t0 = Date.now();
  if (log.isPinned) throw new PinnedError('a pinned read handle cannot unsplit the log');
  const chunkRows = Math.max(1, Math.floor(opts.chunkRows ?? DEFAULT_CHUNK));
  const maxRounds = opts.maxRounds ?? DEFAULT_ROUNDS;
  const freezeAfter = opts.freezeAfter ?? DEFAULT_FREEZE_AFTER;
  const report: UnsplitReport = { copiedBack: 0n, switched: false, ms: 0, rewrittenFiles: 0, rounds: 0, frozen: false };
  const done = (): UnsplitReport => ({ ...report, ms: Date.now() - t0 });
  await clearDeadFreeze(log, 'unsplit:freeze-cleared');
  if (!(await log.ringSplit())) return done();
  crashPoint('unsplit:start');
  let held: HeldFreeze | undefined;
  try {
    for (let round = 0; ; round++) {
      if (round >= maxRounds) {
        throw new Error(`unsplit_ring: the ring tables kept changing: ${maxRounds} round(s) without a quiet moment to switch back — not switched; run it again`);
      }
      report.rounds = round + 1;
      if (!held && round >= freezeAfter) {
        try {
          held = await takeFreeze(log, 'unsplit_ring', (base) => {
            if (!isRingSplit(base)) throw new Moved('the lake was switched back by someone else');
          });
        } catch (e) {
          if (e instanceof Moved && !(await log.ringSplit())) return done();
          throw e;
        }
        report.frozen = true;
        crashPoint('unsplit:frozen');
      }
      const ringSnaps = new Map<Kind, bigint | undefined>();
      for (const kind of SOURCE_KINDS) {
        ringSnaps.set(kind, await syncBack(log, kind, chunkRows, report));
        crashPoint('unsplit:after-kind');
      }
      crashPoint('unsplit:before-switch');
      const freeze = held?.id;
      try {
        await log.commit('ring: switch to unified', async () => {
          const targets: Omit<CommitTarget, 'io'>[] = [];
          targets.push({
            ident: ident(CODE_NODE_EVENTS),
            update: guarded(switchUpdate({}, [PROP_RING]), (base) => {
              if (!isRingSplit(base)) throw new Moved('the lake was switched back by someone else');
              refuseForeignFreeze(log, 'unsplit_ring', base, freeze);
            }),
          });
          for (const kind of SOURCE_KINDS) {
            const want = ringSnaps.get(kind);
            targets.push({
              ident: ident(ringTableName(kind)),
              assertOnly: true,
              update: checkUpdate((base) => {
                if (base.currentSnapshotId !== want) throw new Moved(`${qualified(ringTableName(kind))} changed after it was copied back`);
              }),
            });
          }
          await log.lake.commit(targets, 'ring: switch to unified');
        });
      } catch (e) {
        if (e instanceof Moved) {
          if (!(await log.ringSplit())) return done();
          crashPoint('unsplit:switch-moved');
          continue;
        }
        throw e;
      }
      held?.end(); // the switch removed the freeze
      held = undefined;
      crashPoint('unsplit:after-switch');
      report.switched = true;
      return done();
    }
  } finally {
    if (held) {
      await releaseFreeze(log, held);
      crashPoint('unsplit:freeze-released');
    }
  }
}

/**
 * Make the source table's ring rows of every krate equal the ring table's (as
 * of the ring snapshot returned): krates the source lacks are appended; krates
 * it holds differently are removed from the source files holding them (one
 * overwrite per data sequence number, so other rows keep their commit order)
 * and appended from the ring table.
 */
async function syncBack(log: EventLog, kind: Kind, chunkRows: number, report: UnsplitReport): Promise<bigint | undefined> {
  const srcName = tableName(kind);
  const ringName = ringTableName(kind);
  const ring = (await log.table(ringName))!;
  const r = ring.currentSnapshot()?.snapshotId;
  const ringStats = await krateStats(scanAt(ring, r));
  let src = (await log.table(srcName))!;
  const srcStats = await krateStats(scanAt(src, src.currentSnapshot()?.snapshotId, RING_FILTER), { repo: UNIVERSE_REPO });
  const cmp = compareStats(ringStats, srcStats);
  if (cmp.equal) return r;
  const stale = cmp.differing.filter((k) => (srcStats.get(k)?.rows ?? 0n) > 0n);
  if (stale.length > 0) {
    const staleRows = and(RING_FILTER, inList(COL_KRATE, stale));
    // the files holding them, by data sequence number
    const holding = new Map<string, bigint>();
    for await (const b of src.scan({ filter: staleRows, columns: [COL_KRATE] }).batches()) {
      if (b.numRows > 0 && b.source) holding.set(b.source.file, b.source.sequenceNumber);
    }
    const bySeq = new Map<bigint, Set<string>>();
    for (const [f, seq] of holding) {
      let s = bySeq.get(seq);
      if (!s) bySeq.set(seq, (s = new Set()));
      s.add(f);
    }
    for (const [seq, files] of bySeq) {
      await log.commit(`ring: rewrite ${qualified(srcName)} without stale ring rows`, async () => {
        const t = (await log.table(srcName))!;
        const keep = or(ne(COL_REPO, UNIVERSE_REPO), not(inList(COL_KRATE, stale)));
        const kept = await t.writeDataFiles(stripSource(CopyScan.of(t, { filter: keep }, files).batches()));
        try {
          await t.commit(t.overwriteUpdate([...files], kept, 'overwrite', { dataSequenceNumber: seq }), `ring: rewrite ${files.size} file(s) of ${qualified(srcName)}`);
        } catch (e) {
          for (const f of kept) await t.io.delete(f.file.filePath).catch(() => undefined);
          throw e;
        }
      });
      report.rewrittenFiles += files.size;
      crashPoint('unsplit:after-rewrite');
    }
    src = (await log.table(srcName))!;
  }
  const res = await copyRows(log, srcName, kind, copySource(ring, r, inList(COL_KRATE, cmp.differing)), chunkRows, 'unsplit:after-copy-chunk');
  report.copiedBack += res.rows;
  // verify what the source now holds
  const now = (await log.table(srcName))!;
  const after = await krateStats(scanAt(now, now.currentSnapshot()?.snapshotId, RING_FILTER), { repo: UNIVERSE_REPO });
  if (!compareStats(ringStats, after).equal) {
    throw new Error(mismatchMessage('unsplit_ring', srcName, after, ringName, ringStats, 'not switched back'));
  }
  return r;
}

async function* stripSource(batches: AsyncIterable<Batch>): AsyncGenerator<Batch> {
  for await (const b of batches) if (b.numRows > 0) yield { fields: b.fields, numRows: b.numRows, columns: b.columns };
}
