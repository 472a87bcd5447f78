/**
 * Ghosts of a dead cellapp's reals (docs/faults.md, "Backups"). Once the
 * cellappmgr has taken the dead cellapp's cells out of the space's tree, the
 * ghosts here of their reals freeze: they stay as they were, so observers see
 * a pause rather than a leave and an enter, until a restored real takes them
 * over (made here, or sending a ghost of itself from elsewhere), or the
 * restore timeout passes and they go (observers then see them leave).
 */
import type { GhostState } from "../../core/wire/mod.ts";
import type { CellRect } from "../../core/geo/mod.ts";
import type { CellHost } from "../cell_host.ts";
import type { Entity } from "../entity.ts";
import type { RangeList } from "../range/mod.ts";
import { continueHistory, historyOf, historyState } from "../witness/mod.ts";
import type { GhostInfo } from "./ghost_records.ts";

/** What frozen ghosts need of the cell holding them. */
export interface FrozenGhostsCell {
  readonly spaceId: number;
  readonly cellId: number;
  readonly time: number;
  /** Every cell of the space, in the tree's order. */
  readonly layout: readonly CellRect[];
  readonly ghosts: Map<number, Entity>;
  readonly rangeList: RangeList;
  readonly host: Pick<CellHost, "ghosting" | "log">;
  disableWitness(e: Entity): void;
}

const NO_PATH: readonly number[] = [];

/** Whether the ghost's real's cell is gone (its cellapp died) and the ghost waits for a restored real. */
export function isFrozen(info: GhostInfo): boolean {
  return !Number.isNaN(info.frozenSince);
}

/**
 * Freezes each ghost whose real's cell the cell's layout no longer has, and
 * thaws one whose real's cell it has (a late realMoved named a live cell).
 * Runs when the geometry changes, not per tick. Returns how many froze.
 */
export function freezeOrphanedGhosts(cell: FrozenGhostsCell): number {
  let froze = 0;
  for (const ghost of cell.ghosts.values()) {
    const info = ghost.ghostInfo!;
    const lives = realCellLives(cell, info);
    if (lives) info.frozenSince = NaN;
    else if (!isFrozen(info)) {
      info.frozenSince = cell.time;
      froze++;
    }
  }
  if (froze > 0) {
    const timeout = cell.host.ghosting.config.restoreTimeoutMs;
    cell.host.log.info(
      `space ${cell.spaceId} cell ${cell.cellId}: ${froze} ghost(s) of reals in cells that are gone stay frozen ` +
        `for up to ${timeout} ms, awaiting their restored reals`,
    );
  }
  return froze;
}

/** Whether the cell that the ghost's real is in (as far as the ghost knows) is still in the space. */
export function realCellLives(cell: FrozenGhostsCell, info: GhostInfo): boolean {
  for (const c of cell.layout) if (c.id === info.realCell && c.cellapp === info.realCellapp) return true;
  return false;
}

/**
 * Drops the frozen `ghost` if its restore timeout passed (observers see it
 * leave). Returns true when it was dropped; the caller reports how many
 * (reportExpired), in one line rather than one per ghost.
 */
export function expireFrozenGhost(cell: FrozenGhostsCell, ghost: Entity, now: number, timeoutMs: number): boolean {
  if (now - ghost.ghostInfo!.frozenSince < timeoutMs) return false;
  dropGhost(cell, ghost);
  return true;
}

/** Logs that `count` frozen ghosts went, their reals not restored within `timeoutMs`. */
export function reportExpired(cell: FrozenGhostsCell, count: number, timeoutMs: number): void {
  if (count === 0) return;
  cell.host.log.info(
    `space ${cell.spaceId} cell ${cell.cellId}: ${count} frozen ghost(s) dropped: their reals were not restored ` +
      `within ${timeoutMs} ms (--restore-timeout)`,
  );
}

/** Takes a ghost out of the cell: its observers see it leave, unless a copy of the same entity replaces it at once. */
export function dropGhost(cell: FrozenGhostsCell, ghost: Entity): void {
  cell.ghosts.delete(ghost.id);
  ghost.destroyed = true;
  cell.disableWitness(ghost);
  cell.rangeList.remove(ghost);
}

/**
 * A restored real `e` is being made in a cell that holds a frozen ghost of
 * it: the ghost goes and `e` goes on with the ghost's event numbering (its
 * life, numbers and stamps), as a teleported real does. Witnesses that had the
 * ghost then follow `e` without a leave or an enter for their clients, and
 * each property observers see whose restored value differs from the ghost's
 * becomes an event, so they get the restored value. Call before `e` joins the
 * range list, while its history is empty. A ghost of a live real (not frozen)
 * cannot be replaced: that is an error naming both.
 */
export function takeOverFrozenGhost(cell: FrozenGhostsCell, e: Entity): void {
  const ghost = cell.ghosts.get(e.id);
  if (!ghost) return;
  const info = ghost.ghostInfo!;
  if (!isFrozen(info)) {
    throw new Error(
      `entity ${e.id} cannot be made real in space ${cell.spaceId} cell ${cell.cellId}: it is a ghost there of a ` +
        `live real in cell ${info.realCell} (cellapp ${info.realCellapp})`,
    );
  }
  dropGhost(cell, ghost);
  // Another type under the same id is another entity: observers see the ghost leave and it enter.
  if (ghost.type !== e.type) return;
  const h = historyOf(e);
  continueHistory(h, historyState(historyOf(ghost)));
  for (const p of e.type.properties) {
    if (ghost.container.holds(p) && !p.type.equals(ghost.container.raw(p.index), e.container.raw(p.index))) {
      e.container.sink?.onChange(p, NO_PATH, e.container.raw(p.index), -1, -1);
    }
  }
}

/**
 * Whether a ghost state from a restored real continues the frozen ghost's
 * event numbering (same type and life, not behind it): the ghost then takes
 * it in place, without a leave or an enter for observers. Otherwise the
 * frozen ghost must go and a new one be made.
 */
export function continuesFrozen(ghost: Entity, state: GhostState): boolean {
  const h = historyOf(ghost);
  return ghost.type.name === state.type && state.history.life === h.life && state.history.lastSeq >= h.lastSeq;
}
