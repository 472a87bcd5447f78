/**
 * Offloading (seeds 002 and 004): a real that left its cell's rect by more
 * than the hysteresis moves to the cell containing it, onto the ghost that
 * cell already holds. The old real becomes a ghost of the new one; nothing is
 * lost or doubled: the old cell freezes the entity while the new one takes it,
 * and keeps it real if the transfer fails.
 */
import { decodeCellBackup, PropertyContainer } from "../core/def/mod.ts";
import type { OffloadState } from "../core/wire/mod.ts";
import type { Entity } from "./entity.ts";
import { type CellAddress, GhostInfo, installGhosting, RealGhosting } from "./ghosts.ts";
import { historyOf } from "./event_history.ts";
import { witnessOf } from "./witness.ts";

/** What the old cell remembers while a transfer to the cell it names is in flight. */
export interface Offloading extends CellAddress {
  /** Calls for the entity that arrived meanwhile, run or forwarded (to where the real went) once the transfer settles. */
  held: ((movedTo: CellAddress | null) => void)[];
}

/** Everything cell `to` needs to make its ghost of `e` real. */
export function offloadStateOf(
  e: Entity,
  to: number,
  fromCellapp: number,
  fromAddress: string,
  now: number,
): OffloadState {
  const g = e.ghosting!;
  return {
    spaceId: e.cell.spaceId,
    cellId: to,
    entity: e.serialise(now),
    syncSeq: g.seq,
    ghosts: [...g.links.values()].map((l) => [l.cellapp, l.address, l.cell]),
    from: [fromCellapp, fromAddress, e.cell.cellId],
    baseAddress: e.baseAddress,
    hasClient: e.hasClient,
    epoch: e.epoch,
    witness: witnessOf(e)?.offloadData(),
  };
}

/**
 * Turns a real into a ghost of its new real, in place, so that its node on the
 * range list (and every witness's view of it) stays as it was.
 */
export function becomeGhost(e: Entity, real: CellAddress, seq: number): void {
  const ghost = new PropertyContainer(e.type, "ghost", { entityId: e.id, readOnly: true });
  for (const p of e.type.properties) if (ghost.holds(p)) ghost.load(p.index, e.container.values[p.index]);
  e.container = ghost;
  e.script = null;
  for (const t of e.timers.values()) t.cancelled = true;
  e.timers.clear();
  e.movement = null;
  for (const t of e.triggers.values()) t.remove();
  e.triggers.clear();
  e.ghosting = null;
  e.isReal = false;
  e.ghostInfo = new GhostInfo(real.cellapp, real.address, real.cell, seq);
}

/**
 * Turns a ghost into the real, in place, from the state its old real sent:
 * all cell properties, the ghost list (now including the old cell) and the
 * sync numbering, so the other ghosts carry on without a gap.
 */
export function becomeReal(e: Entity, state: OffloadState): void {
  const history = historyOf(e);
  const container = decodeCellBackup(e.type, state.entity.props, e.id);
  container.sink = history;
  e.container = container;
  e.isReal = true;
  e.ghostInfo = null;
  e.baseAddress = state.baseAddress;
  e.hasClient = state.hasClient;
  e.epoch = (state.epoch ?? 0) + 1;
  e.nextControllerId = state.entity.nextControllerId;
  const g = new RealGhosting();
  g.seq = state.syncSeq;
  const now = e.cell.time;
  for (const [cellapp, address, cell] of state.ghosts) {
    if (cell !== e.cell.cellId) g.links.set(cell, { cell, cellapp, address, state: "live", since: now });
  }
  const [fromCellapp, fromAddress, fromCell] = state.from;
  g.links.set(fromCell, { cell: fromCell, cellapp: fromCellapp, address: fromAddress, state: "live", since: now });
  installGhosting(e, g);
}
