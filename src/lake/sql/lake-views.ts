// Every table of a lake as a DuckDB view, all pinned to one lake generation:
// table `t` of namespace `ns` is the view `ns.t`, and also plain `t` when no
// other namespace has a table of that name. A table the catalog lists now but
// that did not exist at the generation is left out. Read-only: tables are
// loaded pinned (Lake.loadTable with a generation), nothing is written.
import type { Lake } from '../lake.ts';
import { identToString, type TableIdent } from '../catalog/catalog.ts';
import type { SqlSession, ViewName } from './session.ts';

export interface LakeView {
  ident: TableIdent;
  names: ViewName[];
  snapshotId?: bigint;
  files: number;
}

/** Add a view for each table of `lake` as of `generation` (the current one by default). */
export async function addLakeViews(session: SqlSession, lake: Lake, generation: bigint = lake.catalog.pointerGeneration()): Promise<{ generation: bigint; views: LakeView[] }> {
  const idents = lake.catalog.listAllTables().filter((i) => lake.catalog.pointerAt(i, generation) !== undefined);
  const count = new Map<string, number>();
  for (const i of idents) count.set(i.name, (count.get(i.name) ?? 0) + 1);
  const views: LakeView[] = [];
  for (const ident of idents) {
    const names: ViewName[] = [{ schema: ident.namespace.join('.'), name: ident.name }];
    if (count.get(ident.name) === 1) names.push({ name: ident.name });
    try {
      const table = await lake.loadTable(ident, { generation });
      views.push({ ident, names, ...(await session.addTable(names, table)) });
    } catch (e) {
      throw new Error(`table ${identToString(ident)} at lake generation ${generation}: ${(e as Error).message}`, { cause: e });
    }
  }
  return { generation, views };
}
