/**
 * Offloading (docs/architecture.md, "Ghosts and hand-overs"): a real that left its cell's rect by more
 * than the hysteresis moves to the cell containing it, onto the ghost that
 * cell already holds. The old real becomes a ghost of the new one; nothing is
 * lost or doubled: the old cell fences the entity while the new one takes it
 * (handover_fence.ts), and keeps it real if the transfer fails.
 */
import { errorText } from "../../core/errors.ts";
import { decodeCellBackup, PropertyContainer } from "../../core/def/mod.ts";
import { cellIndexAt } from "../../core/geo/mod.ts";
import { history } from "../../core/history.ts";
import { rectDistanceOutside } from "../../core/geo/mod.ts";
import {
  CellMsg,
  ChannelClosedError,
  type OffloadState,
  RequestTimeoutError,
  type WitnessState,
} from "../../core/wire/mod.ts";
import type { CellRect } from "../../core/geo/mod.ts";
import type { Rect } from "../../core/geo/mod.ts";
import type { SpaceGeometry } from "../../core/wire/mod.ts";
import type { CellHost } from "../cell_host.ts";
import type { CellAddress } from "../cell_layout.ts";
import type { ControllerState } from "../controllers.ts";
import type { Entity } from "../entity.ts";
import type { CellLoadMeter } from "../load/cell_load.ts";
import type { RangeList } from "../range/mod.ts";
import { GhostInfo, type GhostLink, installGhosting, RealGhosting } from "./ghosts.ts";
import { historyOf } from "../witness/mod.ts";
import { beginHandOver, type HandOverCell, settleHandOver } from "./handover.ts";
import { Witness, witnessOf } from "../witness/mod.ts";

export type { Offloading } from "./handover_fence.ts";

/** What offloads need of their cell. */
export interface OffloadCell extends HandOverCell {
  readonly spaceId: number;
  readonly cellId: number;
  readonly cellappId: number;
  readonly time: number;
  readonly rect: Rect;
  readonly geometry: SpaceGeometry;
  /** Every cell of the space, in the tree's order. */
  readonly layout: readonly CellRect[];
  readonly entities: Map<number, Entity>;
  readonly ghosts: Map<number, Entity>;
  readonly rangeList: RangeList;
  readonly loadMeter: CellLoadMeter;
  readonly host: Pick<CellHost, "ghosting" | "log" | "cellEntityMoved" | "clientSink">;
  /** The reals with ghosts, and their batches. */
  readonly borders: { readonly ghosted: Set<Entity>; sendBatchOf(e: Entity): void };
  hasHadEntities: boolean;
  offloadsIn: number;
  offloadsOut: number;
  callScript(e: Entity, name: string, ...args: unknown[]): void;
  /** Gives `e` its script and its onTick a place in the tick. */
  attachScript(e: Entity): void;
  restoreControllers(e: Entity, controllers: readonly ControllerState[]): void;
  /** Takes `e` out of the tick while it is handed over, and puts it back. */
  pause(e: Entity): void;
  resume(e: Entity): void;
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
 * range list (and every witness's view of it) stays as it was. The ghost
 * starts from the state the new real started from (`state`), as every other
 * ghost does: what was done to the old real since reaches it from the new one.
 */
export function becomeGhost(e: Entity, real: CellAddress, state: OffloadState): void {
  const sent = decodeCellBackup(e.type, state.entity.props, e.id);
  const ghost = new PropertyContainer(e.type, "ghost", { entityId: e.id, readOnly: true });
  for (const p of e.type.properties) if (ghost.holds(p)) ghost.load(p.index, sent.values[p.index]);
  e.container = ghost;
  e.script = null;
  for (const t of e.timers.values()) t.cancelled = true;
  e.timers.clear();
  e.movement = null;
  for (const t of e.triggers.values()) t.remove();
  e.triggers.clear();
  e.ghosting = null;
  e.isReal = false;
  e.ghostInfo = new GhostInfo(real.cellapp, real.address, real.cell, state.syncSeq, (state.epoch ?? 0) + 1);
  const [x, y, z] = state.entity.position;
  [e.yaw, e.pitch, e.roll] = state.entity.direction;
  e.isOnGround = state.entity.isOnGround;
  e.y = y;
  e.cell.rangeList.move(e, x, z);
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
  e.clientCallSeq = state.entity.clientCallSeq ?? 0;
  const g = new RealGhosting();
  g.seq = g.announcedSeq = state.syncSeq;
  const now = e.cell.time;
  // Every ghost in the list exists: a real does not hand over while one of its ghosts is still being created.
  for (const [cellapp, address, cell] of state.ghosts) {
    if (cell !== e.cell.cellId) g.links.set(cell, { cell, cellapp, address, state: "live", since: now });
  }
  const [fromCellapp, fromAddress, fromCell] = state.from;
  g.links.set(fromCell, { cell: fromCell, cellapp: fromCellapp, address: fromAddress, state: "live", since: now });
  installGhosting(e, g);
}

/** The offloads of one cell: its reals going to neighbour cells, and theirs coming here. */
export class CellOffloads {
  constructor(private readonly cell: OffloadCell) {}

  /**
   * The offload check, every tick: a real more than the hysteresis
   * outside this cell's rect moves to the cell containing it, provided that
   * cell already holds its ghost (the ghost check sees to that) and none of
   * its ghosts is still being created (the new real could not know whether
   * it exists). A cell with no area (shrunk to zero width, or gone from the
   * tree) can hold nothing, so there is no hysteresis: every real goes. At
   * most maxOffloadsPerTick start per tick, so that a partition that moved
   * across a crowd does not stall the tick; the rest go in the next ticks.
   */
  check(): void {
    const gh = this.cell.host.ghosting;
    const r = this.cell.rect;
    const hysteresis = r.maxX > r.minX && r.maxZ > r.minZ ? gh.config.offloadHysteresis : -1;
    let started = 0;
    for (const e of this.cell.entities.values()) {
      // A JavaScript continuation cannot move between processes: an entity awaiting answers stays until they settle.
      if (e.offloading || e.destroyed || e.offloadRetryAt > this.cell.time || e.pendingCalls > 0) continue;
      if (rectDistanceOutside(r, e.x, e.z) <= hysteresis) continue;
      const target = this.cell.layout[cellIndexAt(this.cell.geometry.tree, e.x, e.z)];
      const link = target && target.id !== this.cell.cellId ? e.ghosting?.links.get(target.id) : undefined;
      if (link?.state !== "live" || creatingGhosts(e)) continue;
      if (started >= gh.config.maxOffloadsPerTick) break;
      started++;
      this.#offload(e, link);
    }
  }

  #offload(e: Entity, link: GhostLink): void {
    const gh = this.cell.host.ghosting;
    this.cell.callScript(e, "onLeavingCell");
    // The script may have sent it elsewhere, destroyed it, or made a call it must be here to hear the answer of.
    if (e.offloading || e.destroyed || e.pendingCalls > 0) return;
    this.cell.borders.sendBatchOf(e); // everything before the hand-over, onLeavingCell's changes included, goes first
    // Its client gets this tick's frame from here; the witness's state travels from that point on.
    witnessOf(e)?.update();
    const to: CellAddress = { cell: link.cell, cellapp: link.cellapp, address: link.address };
    beginHandOver(e, to, this.cell.spaceId);
    this.cell.pause(e); // its movement and onTick go on where it goes (or here again, if it stays)
    const state = offloadStateOf(e, link.cell, this.cell.cellappId, gh.address, this.cell.time);
    this.#send(e, to, state, OFFLOAD_TRIES);
  }

  /**
   * Asks `to` to take `e` over. An answer lost with its channel (closed as dead, or timed out) leaves the outcome
   * unknown: the new cell may have taken the real. Resuming here would then make two reals, so the same state is
   * sent again (over a new channel) while tries are left; the new cell answers a repeat of one it took at once.
   */
  #send(e: Entity, to: CellAddress, state: OffloadState, tries: number): void {
    const gh = this.cell.host.ghosting;
    gh.ask(to.address, gh.config.offloadTimeoutMs, CellMsg.offload, state).then(
      () => this.#offloaded(e, to, state),
      (err) => {
        const unknown = err instanceof ChannelClosedError || err instanceof RequestTimeoutError;
        if (!unknown || tries <= 1) return this.#offloadFailed(e, to, err as Error);
        this.cell.host.log.warn(
          `${e.type.name} ${e.id}: the answer to its offload to cell ${to.cell} (cellapp ${to.cellapp}) was lost ` +
            `(${errorText(err)}); asking again`,
          { entity: e.id, space: this.cell.spaceId },
        );
        this.#send(e, to, state, tries - 1);
      },
    );
  }

  #offloaded(e: Entity, to: CellAddress, state: OffloadState): void {
    const gh = this.cell.host.ghosting;
    const others = [...e.ghosting!.links.values()].filter((l) => l.cell !== to.cell);
    this.cell.offloadsOut++;
    this.cell.entities.delete(e.id);
    this.cell.borders.ghosted.delete(e);
    this.cell.pause(e);
    // Its witness went along (the new cell restored it): it ends here without a word to the client.
    witnessOf(e)?.handOver();
    const held = settleHandOver(this.cell, e, true);
    becomeGhost(e, to, state);
    this.cell.ghosts.set(e.id, e);
    const epoch = e.ghostInfo!.epoch;
    for (const l of others) {
      gh.send(l.address, CellMsg.realMoved, this.cell.spaceId, l.cell, e.id, to.cellapp, to.address, to.cell, epoch);
    }
    if (e.baseAddress !== null) this.cell.host.cellEntityMoved(e, to.address);
    for (const run of held) run(to);
  }

  #offloadFailed(e: Entity, to: CellAddress, err: Error): void {
    this.cell.host.log.warn(
      `${e.type.name} ${e.id} stays real in space ${this.cell.spaceId}: offload to cellapp ${to.cellapp} failed (cell ${to.cell}): ${err.message}`,
      { entity: e.id, space: this.cell.spaceId },
    );
    // Its ghost there stays a ghost, in step: batches go on to it as to the others (a cell that is gone loses its
    // link at the ghost check, once the geometry no longer has it).
    e.offloadRetryAt = this.cell.time + this.cell.host.ghosting.config.checkMs;
    this.cell.resume(e);
    const held = settleHandOver(this.cell, e, false);
    this.cell.callScript(e, "onStayedInCell");
    for (const run of held) run(null);
  }

  /**
   * Makes the ghost here of an offloading real the real. A real sent back here before this
   * cell settled its own hand-over of it to the sender (the answer came, its continuation has not run yet) is still
   * real here: it takes the entity once it became the sender's ghost, answering then.
   */
  receive(state: OffloadState): void | Promise<void> {
    const id = state.entity.id;
    const ghost = this.cell.ghosts.get(id);
    const leaving = ghost ? null : this.cell.entities.get(id)?.offloading;
    const [, fromAddress, fromCell] = state.from;
    if (leaving && leaving.cell === fromCell && leaving.address === fromAddress) {
      return new Promise((resolve, reject) =>
        leaving.held.push((moved) => {
          try {
            if (!moved) throw new Error(`its hand-over from cell ${this.cell.cellId} to cell ${fromCell} failed`);
            resolve(this.receive(state));
          } catch (err) {
            reject(
              new Error(`entity ${id} cannot come back to cell ${this.cell.cellId} of space ${this.cell.spaceId}`, {
                cause: err,
              }),
            );
          }
        })
      );
    }
    // A repeat of an offload this cell took (its answer was lost): it holds a later real or a ghost of one.
    const here = ghost ?? this.cell.entities.get(id);
    if (here && (here.isReal ? here.epoch : here.ghostInfo!.epoch) > (state.epoch ?? 0)) return;
    if (!ghost) throw new Error(`space ${this.cell.spaceId} holds no ghost of entity ${id} here to make real`);
    const info = ghost.ghostInfo!;
    // Its history must reach the real's: taking over with events missing would number new ones twice.
    if (info.seq !== state.syncSeq) {
      throw new Error(
        `the ghost of ${ghost.type.name} ${id} in cell ${this.cell.cellId} has batch ${info.seq} of ${state.syncSeq}: it takes over once it has them all`,
      );
    }
    // Decodes the state before anything changes: a state that does not decode leaves the ghost a ghost.
    becomeReal(ghost, state);
    this.cell.ghosts.delete(id);
    const [x, y, z] = state.entity.position;
    [ghost.yaw, ghost.pitch, ghost.roll] = state.entity.direction;
    ghost.isOnGround = state.entity.isOnGround;
    ghost.y = y;
    this.cell.rangeList.move(ghost, x, z);
    this.cell.entities.set(id, ghost);
    history.real(id, this.cell.spaceId, this.cell.cellId, ghost.epoch);
    this.cell.loadMeter.clear(ghost);
    this.cell.hasHadEntities = true;
    this.cell.borders.ghosted.add(ghost);
    this.cell.attachScript(ghost);
    this.cell.restoreControllers(ghost, state.entity.controllers as ControllerState[]);
    if (state.witness) this.#restoreWitness(ghost, state.witness);
    this.cell.offloadsIn++;
    this.cell.host.log.debug(`${ghost.type.name} ${id} offloaded in to cell ${this.cell.cellId}`, {
      entity: id,
      space: this.cell.spaceId,
    });
    this.cell.callScript(ghost, "onEnteredCell");
  }

  #restoreWitness(e: Entity, state: WitnessState): void {
    const sink = this.cell.host.clientSink(e);
    if (sink) Witness.restore(e, state, sink);
    else this.cell.host.log.warn(`${e.type.name} ${e.id} came with a witness, but this cell cannot reach its client`);
  }
}

/** How many times an offload is sent while its answers are lost on the way (OffloadCell #send). */
const OFFLOAD_TRIES = 3;

/** Whether a ghost of `e` has been asked for and not confirmed yet. */
function creatingGhosts(e: Entity): boolean {
  for (const l of e.ghosting!.links.values()) if (l.state === "creating") return true;
  return false;
}
