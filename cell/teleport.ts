/**
 * Teleports: a real jumps to a position in its space, or in
 * another one. Within its own cell it simply moves; otherwise the real is
 * created directly in the destination cell (no ghost needed there) and
 * removed here once that cell has it, and its client's view is rebuilt: the
 * old view gets a leave for everything, the new witness enters what is there.
 * Its event numbering goes with it (as a hand-over carries it), so observers
 * there that held its ghost keep their copy and cached clients stay valid;
 * its base hears where it landed (its client gets a forced position, its
 * speed check starts there).
 */
import { errorText } from "../core/errors.ts";
import { decodeCellBackup } from "../core/def/mod.ts";
import type { Vec3 } from "../core/script.ts";
import { CellMsg, type TeleportState } from "../core/wire/mod.ts";
import type { CellRect } from "../core/geo/mod.ts";
import type { CellHost } from "./cell_host.ts";
import type { CellAddress } from "./cell_layout.ts";
import type { ControllerState } from "./controllers.ts";
import { Entity, type EntityHost } from "./entity.ts";
import {
  beginHandOver,
  type CellBorders,
  ghostingOf,
  type HandOverCell,
  offloadStateOf,
  settleHandOver,
} from "./borders/mod.ts";
import { MAX_COORD, withinWorld } from "../core/geo/mod.ts";
import { witnessOf } from "./witness/mod.ts";
import { continueHistory, historyOf, historyState } from "./witness/mod.ts";

/** What a teleport needs of the cell it leaves or lands in (which is the host of the entities it makes). */
export interface TeleportCell extends EntityHost, HandOverCell {
  readonly cellappId: number;
  readonly host: CellHost;
  /** Where the entities it hands over went, their ghost batches, and the ghost of one that lands here. */
  readonly borders: Pick<CellBorders, "sendBatches" | "noteDeparted" | "deleteGhost">;
  /** The cell of this space containing (x, z), with its cellapp's address when known. */
  cellAt(x: number, z: number): { cell: CellRect; address: string | undefined };
  /** Takes `e` out of the tick while it is handed over, and puts it back. */
  pause(e: Entity): void;
  resume(e: Entity): void;
  addTeleported(e: Entity, controllers: readonly ControllerState[]): void;
  removeTeleported(e: Entity): void;
}

/**
 * Whether `e` is being teleported to another cell: positions its client reported meanwhile were meant for where it
 * was, and are dropped rather than carried over (its base corrects the client once it landed).
 */
export function isTeleporting(e: Entity): boolean {
  return e.teleporting;
}

/** Teleports `e` to `pos` in space `spaceId` (its own by default); resolves once it is there. */
export async function teleport(cell: TeleportCell, e: Entity, pos: Vec3, spaceId = cell.spaceId): Promise<void> {
  if (!e.isReal || e.destroyed) throw new Error(`teleport: ${e.type.name} ${e.id} is not a real entity here`);
  if (e.offloading) throw new Error(`teleport: ${e.type.name} ${e.id} is already moving to another cell`);
  if (!withinWorld([pos.x, pos.y, pos.z])) {
    throw new Error(`teleport: position (${pos.x}, ${pos.y}, ${pos.z}) of ${e.id} is not within ±${MAX_COORD} m`);
  }
  if (!(Number.isInteger(spaceId) && spaceId >= 1 && spaceId < 2 ** 32)) {
    throw new Error(`teleport: no space ${spaceId}`);
  }
  // A navigation's path is of where the entity was: it fails at the next tick wherever the entity lands.
  const m = e.movement;
  if (m?.kind === "navigate" && m.failed === undefined) {
    m.path = [];
    m.failed = `navigate by ${e.type.name} ${e.id}: it was teleported to (${pos.x}, ${pos.y}, ${pos.z})`;
  }
  let target: CellAddress;
  if (spaceId === cell.spaceId) {
    const { cell: dest, address } = cell.cellAt(pos.x, pos.z);
    if (dest.id === cell.cellId) {
      cell.moveEntity(e, pos.x, pos.y, pos.z);
      if (e.hasClient && e.baseAddress !== null) cell.host.entityTeleported(e, spaceId, pos);
      return;
    }
    if (!address) throw new Error(`teleport: the cellapp of the destination cell is unknown`);
    target = { cell: dest.id, cellapp: dest.cellapp, address };
  } else {
    target = await cell.host.findCell(spaceId, pos.x, pos.z);
  }
  const gh = cell.host.ghosting;
  // The hand-over of an offload, without a ghost at the destination.
  ghostingOf(e);
  cell.borders.sendBatches();
  beginHandOver(e, target, spaceId);
  cell.pause(e);
  const witness = witnessOf(e);
  const hadWitness = witness !== undefined;
  witness?.update();
  const state = offloadStateOf(e, target.cell, cell.cellappId, gh.address, cell.time);
  state.spaceId = spaceId;
  state.entity.position = [pos.x, pos.y, pos.z];
  state.witness = undefined;
  if (spaceId !== cell.spaceId) state.ghosts = [];
  const history = historyState(historyOf(e));
  e.teleporting = true;
  try {
    const answersOwed = witness?.answersOwed() ?? [];
    await gh.ask(target.address, gh.config.offloadTimeoutMs, CellMsg.teleportIn, {
      ...state,
      hadWitness,
      history,
      ...(answersOwed.length > 0 ? { answersOwed } : {}),
    });
  } catch (err) {
    cell.resume(e);
    const held = settleHandOver(cell, e, false);
    for (const run of held) run(null);
    throw new Error(`teleport of ${e.type.name} ${e.id} failed; it stays where it was: ${errorText(err)}`, {
      cause: err,
    });
  } finally {
    e.teleporting = false;
  }
  const held = settleHandOver(cell, e, true);
  witness?.closeView();
  cell.removeTeleported(e);
  cell.borders.noteDeparted(e.id, target, spaceId);
  if (e.baseAddress !== null) {
    // After its last frame from here and before the move marker: in order with this epoch's frames.
    if (e.hasClient) cell.host.entityTeleported(e, spaceId, pos);
    cell.host.cellEntityMoved(e, target.address, spaceId);
  }
  for (const run of held) run(target);
}

/**
 * Creates a teleporting real here from its state, replacing a ghost of it if this cell has one; its event numbering
 * goes on from where it was, so witnesses here that had the ghost keep their view of it.
 */
export function receiveTeleport(cell: TeleportCell, state: TeleportState): Entity {
  const s = state.entity;
  if (cell.entities.has(s.id)) throw new Error(`teleport: entity ${s.id} is already real in space ${cell.spaceId}`);
  const type = cell.host.registry.find(s.type);
  if (!type) throw new Error(`teleport: unknown entity type "${s.type}" for entity ${s.id}`);
  // Decoded first: a state that does not decode changes nothing here.
  const container = decodeCellBackup(type, s.props, s.id);
  if (cell.ghosts.has(s.id)) cell.borders.deleteGhost(s.id);
  const [x, y, z] = s.position;
  const e = new Entity(s.id, type, cell, { x, y, z }, container);
  [e.yaw, e.pitch, e.roll] = s.direction;
  e.isOnGround = s.isOnGround;
  e.nextControllerId = s.nextControllerId;
  e.clientCallSeq = s.clientCallSeq ?? 0;
  e.baseAddress = state.baseAddress;
  e.hasClient = state.hasClient;
  e.epoch = (state.epoch ?? 0) + 1;
  e.teleportedFrom = state.from[1];
  if (state.history) continueHistory(historyOf(e), state.history);
  // Its batches go on from the old real's number, so that one of the old real's arriving late is known as old.
  const g = ghostingOf(e);
  g.seq = g.announcedSeq = state.syncSeq;
  cell.addTeleported(e, s.controllers as ControllerState[]);
  if (state.hadWitness) {
    const sink = cell.host.clientSink(e);
    if (sink) {
      cell.enableWitness(e, sink);
      witnessOf(e)?.oweAnswers(state.answersOwed ?? []);
    }
  }
  return e;
}
