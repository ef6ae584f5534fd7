// Name mapping (spec: "Column Projection", App. C): the table property
// `schema.name-mapping.default` gives field ids to data-file columns written
// without them (files added by `add_files`, Hive migrations). It is a JSON
// list of `{names: [...], field-id?, fields?: [...]}`; a field may go by
// several names (aliases), `fields` maps struct children, a list's `element`
// and a map's `key` and `value`, and a name holding `.` is one literal name.
//
// Rule (spec order): a column's own Parquet field id always wins; a column
// without one takes the id its name maps to, unless another column of the
// file carries that id itself; a column neither way has no id (the field
// then reads as its initial default, else null). Pure functions, no I/O.
import { parseJson, type Json } from './json.ts';

/** The table property that holds the mapping. */
export const NAME_MAPPING_PROPERTY = 'schema.name-mapping.default';

export interface MappedField {
  names: string[];
  fieldId?: number;
  fields: MappedField[];
}

/** One level of a mapping (the top level, or a field's `fields`). */
export type NameMapping = MappedField[];

const isObject = (j: Json | undefined): j is { [key: string]: Json } =>
  typeof j === 'object' && j !== null && !Array.isArray(j) && typeof j !== 'bigint';

/** Parse a name mapping's JSON text; errors name `what` and the offending entry. */
export function parseNameMapping(text: string, what: string): NameMapping {
  let j: Json;
  try {
    j = parseJson(text);
  } catch (e) {
    throw new Error(`${what}: not JSON (${(e as Error).message})`);
  }
  return level(j, what);
}

function level(j: Json, what: string): NameMapping {
  if (!Array.isArray(j)) throw new TypeError(`${what}: expected a list of field mappings, found ${typeof j}`);
  return j.map((e, i) => {
    const w = `${what}[${i}]`;
    if (!isObject(e)) throw new TypeError(`${w}: expected an object with "names", found ${JSON.stringify(e)}`);
    const names = e.names ?? [];
    if (!Array.isArray(names) || names.some((n) => typeof n !== 'string')) throw new TypeError(`${w}: expected "names" to be a list of strings`);
    const id = e['field-id'];
    if (id !== undefined && id !== null && (typeof id !== 'number' || !Number.isInteger(id))) {
      throw new TypeError(`${w}: expected an integer "field-id", found ${JSON.stringify(typeof id === 'bigint' ? String(id) : id)}`);
    }
    const fields = e.fields === undefined || e.fields === null ? [] : level(e.fields, `${w}.fields`);
    return { names: names as string[], ...(typeof id === 'number' ? { fieldId: id } : {}), fields };
  });
}

/** The table's name mapping, or undefined when it has none. */
export function nameMappingOf(properties: Record<string, string>): NameMapping | undefined {
  const text = properties[NAME_MAPPING_PROPERTY];
  if (text === undefined) return undefined;
  return parseNameMapping(text, `table property ${NAME_MAPPING_PROPERTY}`);
}

/** The entry of one level that lists `name` among its names. */
export function mappedByName(lvl: NameMapping, name: string): MappedField | undefined {
  return lvl.find((m) => m.names.includes(name));
}

/** The entry of one level with this field id. */
export function mappedById(lvl: NameMapping, id: number): MappedField | undefined {
  return lvl.find((m) => m.fieldId === id);
}
