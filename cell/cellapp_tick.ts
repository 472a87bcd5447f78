/**
 * One tick of a cellapp's cells, as the wire sees it (docs/architecture.md, "The wire"): what the cells' ticks write
 * (ghost batches, their clients' frames) is one bundle, flushed before the backups are made, which are a second one,
 * so that frames do not wait for backups. Each cell is timed on its own, and what the tick cost is charged as CPU.
 */
import { processCpuUs } from "../core/busy.ts";
import { errorText } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import { tick as bundle } from "../core/wire/mod.ts";

/** What the tick needs of a cell. */
export interface TickedCell {
  readonly spaceId: number;
  readonly cellId: number;
  tick(dtMs: number): void;
  readonly stats: { record(start: number, ms: number): void };
  readonly loadMeter: { settle(cpuShare: number): void };
}

/** What the tick needs of the backups: make this tick's share of them. */
export interface TickedBackups<C> {
  tick(cells: Iterable<C>): number;
}

/**
 * Ticks every cell by `dtMs`, then makes the backups. A cell whose tick throws is logged and the others still tick;
 * failed backups are logged too.
 */
export function tickCells<C extends TickedCell>(
  cells: { values(): Iterable<C> },
  backups: TickedBackups<C>,
  dtMs: number,
  log: Logger,
): void {
  const start = performance.now();
  const cpu0 = processCpuUs();
  try {
    bundle(() => {
      for (const cell of cells.values()) {
        const t0 = performance.now();
        try {
          cell.tick(dtMs);
        } catch (e) {
          log.error(`tick of cell ${cell.cellId} of space ${cell.spaceId} failed: ${errorText(e, { stack: true })}`);
        }
        cell.stats.record(t0, performance.now() - t0);
      }
    });
    bundle(() => {
      try {
        backups.tick(cells.values());
      } catch (e) {
        log.error(`cell backups failed: ${errorText(e, { stack: true })}`);
      }
    });
  } finally {
    // What the entities were charged in the tick, as CPU: a process that waited for a core meanwhile charged them
    // that wait too, and a busy machine would make idle cells look loaded.
    const wallMs = performance.now() - start;
    const share = wallMs > 1 ? (processCpuUs() - cpu0) / 1000 / wallMs : 1;
    for (const cell of cells.values()) cell.loadMeter.settle(share);
  }
}
