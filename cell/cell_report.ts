/**
 * What a cell tells of itself: its figures for the cellappmgr's load report (once a second), and its entities as
 * the admin API lists them.
 */
import { type CellReport, type EntitySummary, MAX_LOAD } from "../core/wire/mod.ts";
import type { CellLoadMeter } from "./load/cell_load.ts";
import type { TickStats } from "./tick_stats.ts";

/** What the listing reads of an entity. */
interface Listed {
  readonly id: number;
  readonly type: { readonly name: string };
  readonly x: number;
  readonly y: number;
  readonly z: number;
  /** Its base's address; null for an NPC, which only the buddy cellapp backs up. */
  readonly baseAddress: string | null;
}

/** What a report reads of its cell. */
export interface ReportedCell {
  readonly spaceId: number;
  readonly cellId: number;
  /** Reals of the cell. */
  readonly entities: ReadonlyMap<number, Listed>;
  /** Ghosts held by the cell. */
  readonly ghosts: ReadonlyMap<number, Listed>;
  readonly stats: TickStats;
  readonly loadMeter: CellLoadMeter;
  readonly offloadsIn: number;
  readonly offloadsOut: number;
  readonly hasHadEntities: boolean;
}

/** The cell's figures for the load report; it folds the reals' CPU (see cell/load/). */
export function cellReport(cell: ReportedCell, now: number): CellReport {
  const { entityLoad, entityBounds } = cell.loadMeter.sample(now);
  return {
    spaceId: cell.spaceId,
    cellId: cell.cellId,
    reals: cell.entities.size,
    ghosts: cell.ghosts.size,
    tickRate: round(cell.stats.rate(now)),
    tickMsP50: round(cell.stats.percentile(0.5)),
    tickMsP99: round(cell.stats.percentile(0.99)),
    load: Math.min(round(cell.stats.load), MAX_LOAD),
    offloadsIn: cell.offloadsIn,
    offloadsOut: cell.offloadsOut,
    hadEntities: cell.hasHadEntities,
    entityLoad,
    entityBounds,
    unbacked: unbackedTypes(cell.entities),
  };
}

/** How many of `reals` have no base, by type name. */
function unbackedTypes(reals: ReadonlyMap<number, Listed>): [string, number][] {
  const n = new Map<string, number>();
  for (const e of reals.values()) if (e.baseAddress === null) n.set(e.type.name, (n.get(e.type.name) ?? 0) + 1);
  return [...n];
}

/** The cell's reals and ghosts as the admin API lists them. */
export function describeEntities(cell: ReportedCell): EntitySummary[] {
  const out: EntitySummary[] = [];
  for (const e of cell.entities.values()) {
    out.push({ id: e.id, type: e.type.name, position: [e.x, e.y, e.z], real: true, cell: cell.cellId });
  }
  for (const e of cell.ghosts.values()) {
    out.push({ id: e.id, type: e.type.name, position: [e.x, e.y, e.z], real: false, cell: cell.cellId });
  }
  return out;
}

function round(v: number): number {
  return Math.round(v * 1000) / 1000;
}
