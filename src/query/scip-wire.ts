// The subset of SCIP (Sourcegraph's Code Intelligence Protocol, scip.proto of
// github.com/sourcegraph/scip, package `scip`) that `mimir export scip`
// writes, as plain data, with its protobuf wire encoding and a decoder for
// exactly the same fields (tests read an index back with it). No generated
// code: each field is written with @bufbuild/protobuf's BinaryWriter under
// the field number scip.proto gives it, named in the comment beside it.
//
// An Index is written as a stream: the Metadata (field 1) first, as
// scip.proto requires for streaming consumers, then each Document (field 2)
// and each external SymbolInformation (field 3) as its own length-delimited
// record. Protobuf concatenates repeated fields, so the stream is one valid
// Index message and memory is bounded by one document. Pure: no I/O.
import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';

/** scip.TextEncoding.UTF8 (the files' text encoding, Metadata.text_document_encoding). */
export const TEXT_ENCODING_UTF8 = 1;
/** scip.PositionEncoding.UTF16CodeUnitOffsetFromLineStart: Mimir's columns count UTF-16 code units (extract/tree.ts). */
export const POSITION_ENCODING_UTF16 = 2;
/** scip.SymbolRole.Definition (a bit of Occurrence.symbol_roles). */
export const ROLE_DEFINITION = 0x1;
/** scip.SymbolRole.Import. */
export const ROLE_IMPORT = 0x2;

/** scip.SymbolInformation.Kind values used for Rust items. */
export const SYMBOL_KIND = {
  Constant: 8,
  Enum: 11,
  EnumMember: 12,
  Function: 17,
  Macro: 25,
  Method: 26,
  Module: 29,
  StaticVariable: 82,
  Struct: 49,
  Trait: 53,
  TraitMethod: 70,
  TypeAlias: 55,
  Union: 59,
} as const;

/** scip.ToolInfo. */
export interface ToolInfo {
  name: string; // field 1
  version: string; // field 2
  arguments: string[]; // field 3 (repeated)
}

/** scip.Metadata. */
export interface Metadata {
  version: number; // field 1, ProtocolVersion (0: UnspecifiedProtocolVersion, the only one)
  toolInfo: ToolInfo; // field 2
  projectRoot: string; // field 3, a URI
  textDocumentEncoding: number; // field 4, TextEncoding
}

/** scip.Occurrence. */
export interface Occurrence {
  /** field 1 (packed int32): [startLine, startChar, endChar] or [startLine, startChar, endLine, endChar], 0-based. */
  range: number[];
  symbol: string; // field 2
  symbolRoles: number; // field 3, a SymbolRole bit set
}

/** scip.SymbolInformation. */
export interface SymbolInformation {
  symbol: string; // field 1
  documentation: string[]; // field 3 (repeated, markdown)
  kind: number; // field 5, SymbolInformation.Kind (0: unspecified)
  displayName: string; // field 6
}

/** scip.Document. */
export interface Document {
  relativePath: string; // field 1
  occurrences: Occurrence[]; // field 2
  symbols: SymbolInformation[]; // field 3
  language: string; // field 4
  positionEncoding: number; // field 6, PositionEncoding
}

export interface Index {
  metadata: Metadata; // Index field 1
  documents: Document[]; // Index field 2
  externalSymbols: SymbolInformation[]; // Index field 3
}

const LEN = WireType.LengthDelimited;
const VARINT = WireType.Varint;

// ---- encoding -------------------------------------------------------------------

function str(w: BinaryWriter, field: number, v: string): void {
  if (v !== '') w.tag(field, LEN).string(v);
}
function int(w: BinaryWriter, field: number, v: number): void {
  if (v !== 0) w.tag(field, VARINT).int32(v);
}

function toolInfo(w: BinaryWriter, t: ToolInfo): void {
  str(w, 1, t.name);
  str(w, 2, t.version);
  for (const a of t.arguments) w.tag(3, LEN).string(a);
}

function metadata(w: BinaryWriter, m: Metadata): void {
  int(w, 1, m.version);
  w.tag(2, LEN).fork();
  toolInfo(w, m.toolInfo);
  w.join();
  str(w, 3, m.projectRoot);
  int(w, 4, m.textDocumentEncoding);
}

function occurrence(w: BinaryWriter, o: Occurrence): void {
  w.tag(1, LEN).fork();
  for (const n of o.range) w.int32(n);
  w.join();
  str(w, 2, o.symbol);
  int(w, 3, o.symbolRoles);
}

function symbolInformation(w: BinaryWriter, s: SymbolInformation): void {
  str(w, 1, s.symbol);
  for (const d of s.documentation) w.tag(3, LEN).string(d);
  int(w, 5, s.kind);
  str(w, 6, s.displayName);
}

function document(w: BinaryWriter, d: Document): void {
  str(w, 1, d.relativePath);
  for (const o of d.occurrences) {
    w.tag(2, LEN).fork();
    occurrence(w, o);
    w.join();
  }
  for (const s of d.symbols) {
    w.tag(3, LEN).fork();
    symbolInformation(w, s);
    w.join();
  }
  str(w, 4, d.language);
  int(w, 6, d.positionEncoding);
}

/** Index field 1 (Metadata), as bytes to write first. */
export function encodeMetadataRecord(m: Metadata): Uint8Array {
  const w = new BinaryWriter();
  w.tag(1, LEN).fork();
  metadata(w, m);
  w.join();
  return w.finish();
}

/** Index field 2 (one Document), as bytes to append to the stream. */
export function encodeDocumentRecord(d: Document): Uint8Array {
  const w = new BinaryWriter();
  w.tag(2, LEN).fork();
  document(w, d);
  w.join();
  return w.finish();
}

/** Index field 3 (one external SymbolInformation), as bytes to append to the stream. */
export function encodeExternalSymbolRecord(s: SymbolInformation): Uint8Array {
  const w = new BinaryWriter();
  w.tag(3, LEN).fork();
  symbolInformation(w, s);
  w.join();
  return w.finish();
}

/** A whole Index in one buffer (the records above, concatenated). */
export function encodeIndex(i: Index): Uint8Array {
  const parts = [encodeMetadataRecord(i.metadata), ...i.documents.map(encodeDocumentRecord), ...i.externalSymbols.map(encodeExternalSymbolRecord)];
  return Buffer.concat(parts);
}

// ---- decoding (the same fields; others are skipped) ------------------------------

/** Reads the fields of one message from `r` up to `end`, handing each (field, wire type) to `on`, which must consume it or return false (skipped). */
function fields(r: BinaryReader, end: number, on: (field: number, wt: WireType) => boolean): void {
  while (r.pos < end) {
    const [field, wt] = r.tag();
    if (!on(field, wt)) r.skip(wt, field);
  }
}

const sub = (r: BinaryReader): number => {
  const n = r.uint32();
  return r.pos + n;
};

function readInts(r: BinaryReader, wt: WireType, into: number[]): void {
  if (wt !== LEN) {
    into.push(r.int32());
    return;
  }
  const end = sub(r);
  while (r.pos < end) into.push(r.int32());
}

function readToolInfo(r: BinaryReader, end: number): ToolInfo {
  const t: ToolInfo = { name: '', version: '', arguments: [] };
  fields(r, end, (f) => {
    if (f === 1) t.name = r.string();
    else if (f === 2) t.version = r.string();
    else if (f === 3) t.arguments.push(r.string());
    else return false;
    return true;
  });
  return t;
}

function readMetadata(r: BinaryReader, end: number): Metadata {
  const m: Metadata = { version: 0, toolInfo: { name: '', version: '', arguments: [] }, projectRoot: '', textDocumentEncoding: 0 };
  fields(r, end, (f) => {
    if (f === 1) m.version = r.int32();
    else if (f === 2) m.toolInfo = readToolInfo(r, sub(r));
    else if (f === 3) m.projectRoot = r.string();
    else if (f === 4) m.textDocumentEncoding = r.int32();
    else return false;
    return true;
  });
  return m;
}

function readOccurrence(r: BinaryReader, end: number): Occurrence {
  const o: Occurrence = { range: [], symbol: '', symbolRoles: 0 };
  fields(r, end, (f, wt) => {
    if (f === 1) readInts(r, wt, o.range);
    else if (f === 2) o.symbol = r.string();
    else if (f === 3) o.symbolRoles = r.int32();
    else return false;
    return true;
  });
  return o;
}

function readSymbolInformation(r: BinaryReader, end: number): SymbolInformation {
  const s: SymbolInformation = { symbol: '', documentation: [], kind: 0, displayName: '' };
  fields(r, end, (f) => {
    if (f === 1) s.symbol = r.string();
    else if (f === 3) s.documentation.push(r.string());
    else if (f === 5) s.kind = r.int32();
    else if (f === 6) s.displayName = r.string();
    else return false;
    return true;
  });
  return s;
}

function readDocument(r: BinaryReader, end: number): Document {
  const d: Document = { relativePath: '', occurrences: [], symbols: [], language: '', positionEncoding: 0 };
  fields(r, end, (f) => {
    if (f === 1) d.relativePath = r.string();
    else if (f === 2) d.occurrences.push(readOccurrence(r, sub(r)));
    else if (f === 3) d.symbols.push(readSymbolInformation(r, sub(r)));
    else if (f === 4) d.language = r.string();
    else if (f === 6) d.positionEncoding = r.int32();
    else return false;
    return true;
  });
  return d;
}

/** Decode an Index (the fields above; unknown fields skipped). Throws on malformed bytes. */
export function decodeIndex(bytes: Uint8Array): Index {
  const r = new BinaryReader(bytes);
  const out: Index = { metadata: { version: 0, toolInfo: { name: '', version: '', arguments: [] }, projectRoot: '', textDocumentEncoding: 0 }, documents: [], externalSymbols: [] };
  fields(r, r.len, (f) => {
    if (f === 1) out.metadata = readMetadata(r, sub(r));
    else if (f === 2) out.documents.push(readDocument(r, sub(r)));
    else if (f === 3) out.externalSymbols.push(readSymbolInformation(r, sub(r)));
    else return false;
    return true;
  });
  return out;
}
