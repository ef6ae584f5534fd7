// A small hand-written checker of Iceberg REST catalog responses: the
// required fields and types the protocol's OpenAPI description gives each
// response the read side sends (CatalogConfig, ListNamespacesResponse,
// GetNamespaceResponse, ListTablesResponse, LoadTableResult and the error
// model IcebergErrorResponse). Written from the spec's facts, not copied
// from it. `problems` returns what is wrong (empty: valid).
import type { Json } from '../../src/lake/spec/json.ts';

export type RestShape = 'CatalogConfig' | 'ListNamespacesResponse' | 'GetNamespaceResponse' | 'ListTablesResponse' | 'LoadTableResult' | 'IcebergErrorResponse';

type Obj = { [key: string]: Json };
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const isStringMap = (v: unknown): boolean => isObj(v) && Object.values(v).every((x) => typeof x === 'string');
const isNamespace = (v: unknown): boolean => Array.isArray(v) && v.every((l) => typeof l === 'string');
const isInt = (v: unknown): boolean => typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v));

function unique(list: Json[]): boolean {
  const seen = new Set(list.map((x) => JSON.stringify(x, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))));
  return seen.size === list.length;
}

function pageToken(o: Obj, out: string[]): void {
  if ('next-page-token' in o && o['next-page-token'] !== null && typeof o['next-page-token'] !== 'string') out.push('next-page-token: expected a string or null');
}

/** What is wrong with `body` (parsed, 64-bit safe) as a `shape` sent with HTTP status `status`. */
export function problems(shape: RestShape, body: Json, status: number): string[] {
  const out: string[] = [];
  if (!isObj(body)) return [`${shape}: expected a JSON object, found ${JSON.stringify(body)?.slice(0, 80)}`];
  switch (shape) {
    case 'CatalogConfig':
      if (!isStringMap(body.defaults)) out.push('defaults: required, a map of strings');
      if (!isStringMap(body.overrides)) out.push('overrides: required, a map of strings');
      if ('endpoints' in body) {
        const e = body.endpoints;
        if (!Array.isArray(e) || !e.every((x) => typeof x === 'string' && /^(GET|HEAD|POST|DELETE|PUT) \/v1\/\S+$/.test(x))) out.push('endpoints: expected strings "<METHOD> /v1/<path>"');
      }
      break;
    case 'ListNamespacesResponse':
      if ('namespaces' in body && !(Array.isArray(body.namespaces) && body.namespaces.every(isNamespace) && unique(body.namespaces))) out.push('namespaces: expected unique namespaces (arrays of strings)');
      pageToken(body, out);
      break;
    case 'GetNamespaceResponse':
      if (!isNamespace(body.namespace)) out.push('namespace: required, an array of strings');
      if ('properties' in body && body.properties !== null && !isStringMap(body.properties)) out.push('properties: expected a map of strings or null');
      break;
    case 'ListTablesResponse':
      if ('identifiers' in body) {
        const ids = body.identifiers;
        if (!Array.isArray(ids) || !ids.every((i) => isObj(i) && isNamespace(i.namespace) && typeof i.name === 'string') || !unique(ids)) {
          out.push('identifiers: expected unique {namespace: string[], name: string}');
        }
      }
      pageToken(body, out);
      break;
    case 'LoadTableResult': {
      const m = body.metadata;
      if (!isObj(m)) out.push('metadata: required, an object');
      else {
        if (!isInt(m['format-version']) || Number(m['format-version']) < 1 || Number(m['format-version']) > 3) out.push('metadata.format-version: required, an integer 1..3');
        if (typeof m['table-uuid'] !== 'string') out.push('metadata.table-uuid: required, a string');
      }
      if ('metadata-location' in body && typeof body['metadata-location'] !== 'string') out.push('metadata-location: expected a string');
      if ('config' in body && !isStringMap(body.config)) out.push('config: expected a map of strings');
      break;
    }
    case 'IcebergErrorResponse': {
      const extra = Object.keys(body).filter((k) => k !== 'error');
      if (extra.length > 0) out.push(`unexpected fields beside error: ${extra.join(', ')}`);
      const e = body.error;
      if (!isObj(e)) {
        out.push('error: required, an ErrorModel object');
        break;
      }
      if (typeof e.message !== 'string') out.push('error.message: required, a string');
      if (typeof e.type !== 'string') out.push('error.type: required, a string');
      if (!isInt(e.code) || Number(e.code) < 400 || Number(e.code) > 600) out.push('error.code: required, an integer 400..600');
      else if (Number(e.code) !== status) out.push(`error.code ${e.code} differs from the HTTP status ${status}`);
      break;
    }
  }
  return out;
}
