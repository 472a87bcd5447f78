/**
 * A cellapp's metrics: per cell, read from the figures each cell keeps
 * anyway (its tick stats, entity maps, offload and resync counters) when the
 * cellappmgr asks; nothing is done for them on the tick.
 */
import { type MetricSample, ProcessMetrics } from "../core/metrics.ts";
import type { PeerTraffic } from "../core/wire/mod.ts";
import type { Cell } from "./cell.ts";
import { witnessesOf } from "./witness/mod.ts";

/** The registry of a cellapp whose cells are `cells` and whose channels to other cellapps and baseapps are `peers`. */
export function cellAppMetrics(
  cells: ReadonlyMap<string, Cell>,
  peers: () => ReadonlyMap<string, PeerTraffic>,
): ProcessMetrics {
  const m = new ProcessMetrics();
  const r = m.registry;
  const perCell = (value: (c: Cell) => number) => (): MetricSample[] => {
    const out: MetricSample[] = [];
    for (const c of cells.values()) out.push({ labels: { space: c.spaceId, cell: c.cellId }, value: value(c) });
    return out;
  };
  r.sampled("seamless_cell_tick_seconds", "Time each tick of a cell took", "histogram", () => {
    const out: MetricSample[] = [];
    for (const c of cells.values()) {
      out.push(...c.stats.histogram.samples("seamless_cell_tick_seconds", { space: c.spaceId, cell: c.cellId }));
    }
    return out;
  });
  const now = () => performance.now();
  r.sampled(
    "seamless_cell_tick_rate",
    "Ticks per second of a cell over the last 3 s",
    "gauge",
    perCell((c) => c.stats.rate(now())),
  );
  r.sampled(
    "seamless_cell_load",
    "Share of its tick budget a cell spends, smoothed",
    "gauge",
    perCell((c) => c.stats.load),
  );
  r.sampled("seamless_cell_entities", "Real entities in a cell", "gauge", perCell((c) => c.entities.size));
  r.sampled(
    "seamless_cell_ghosts",
    "Ghosts a cell holds of reals in other cells",
    "gauge",
    perCell((c) => c.ghosts.size),
  );
  r.sampled(
    "seamless_cell_witnesses",
    "Witnesses (entities with a client watching through them) in a cell",
    "gauge",
    perCell((c) => witnessesOf(c).size),
  );
  r.sampled("seamless_cell_offloads_total", "Reals that moved into (in) or out of (out) a cell", "counter", () => {
    const out: MetricSample[] = [];
    for (const c of cells.values()) {
      out.push({ labels: { space: c.spaceId, cell: c.cellId, direction: "in" }, value: c.offloadsIn });
      out.push({ labels: { space: c.spaceId, cell: c.cellId, direction: "out" }, value: c.offloadsOut });
    }
    return out;
  });
  r.sampled(
    "seamless_cell_ghost_resyncs_total",
    "Resyncs the ghosts of a cell asked their reals for (each after lost updates)",
    "counter",
    perCell((c) => c.ghostResyncs),
  );
  r.sampled(
    "seamless_peer_bytes_total",
    "Bytes exchanged with other cellapps and baseapps, by the peer's role and direction",
    "counter",
    () => {
      const out: MetricSample[] = [];
      for (const [role, t] of peers()) {
        out.push({ labels: { peer_role: role, direction: "in" }, value: t.bytesIn });
        out.push({ labels: { peer_role: role, direction: "out" }, value: t.bytesOut });
      }
      return out;
    },
  );
  return m;
}
