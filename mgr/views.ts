/** Builds the admin API's views of spaces and cells from the cellappmgr's state. */
import { rectToArray } from "../core/geo/mod.ts";
import type { CellReport } from "../core/wire/mod.ts";
import type { CellView, SpaceSummaryView } from "../core/views.ts";
import type { Space } from "./space.ts";

/** The cells of `s` with their latest reports. */
export function cellViews(s: Space, reports: ReadonlyMap<string, CellReport>): CellView[] {
  return s.cells().map((c) => {
    const r = reports.get(`${s.id}/${c.id}`);
    return {
      id: c.id,
      cellapp: c.cellapp,
      rect: rectToArray(c.rect),
      reals: r?.reals ?? 0,
      ghosts: r?.ghosts ?? 0,
      load: r?.load ?? 0,
      tickRate: r?.tickRate ?? 0,
      tickMsP50: r?.tickMsP50 ?? 0,
      tickMsP99: r?.tickMsP99 ?? 0,
      offloadsIn: r?.offloadsIn ?? 0,
      offloadsOut: r?.offloadsOut ?? 0,
    };
  });
}

/** A space's line in GET /api/spaces. */
export function spaceSummary(s: Space, reports: ReadonlyMap<string, CellReport>): SpaceSummaryView {
  const cells = cellViews(s, reports);
  return {
    id: s.id,
    bounds: rectToArray(s.bounds),
    cells: cells.length,
    entities: cells.reduce((n, c) => n + c.reals, 0),
    isDefault: s.isDefault,
  };
}
