/**
 * A cell's borders (seeds 002 and 004): the ghosts its reals keep in
 * neighbouring cells, the ghosts it holds of theirs, and offloading a real
 * that crossed into a neighbour onto the ghost waiting there.
 */
import { PropertyContainer } from "../core/def/mod.ts";
import { cellIndexAt } from "../core/geo/bsp.ts";
import { rectDistanceOutside } from "../core/geo/rect.ts";
import { CellMsg, type GhostOp, type GhostState, type OffloadState, type WitnessState } from "../core/wire/mod.ts";
import type { Cell } from "./cell.ts";
import type { ControllerState } from "./controllers.ts";
import { Entity } from "./entity.ts";
import {
  type CellAddress,
  GhostInfo,
  ghostingOf,
  type GhostLink,
  ghostStateOf,
  loadGhostState,
  receiveBatch,
  takeBatch,
  wantedGhosts,
} from "./ghosts.ts";
import { becomeGhost, becomeReal, offloadStateOf } from "./offload.ts";
import { Witness, witnessOf } from "./witness.ts";

/** The ghost and offload logic of one cell. */
export class CellBorders {
  /** Reals of the cell that have at least one ghost. */
  readonly ghosted: Set<Entity> = new Set();

  constructor(private readonly cell: Cell) {}

  /**
   * The periodic ghost check (seed 002's check_ghost_create_destroy): each
   * real gets a ghost in every neighbour cell whose rect grown by the ghost
   * radius contains it, and loses ghosts outside that area once they lived
   * the minimum time; creations per pass are capped, unanswered ones retried.
   */
  checkGhosts(): void {
    const gh = this.cell.host.ghosting;
    if (!gh) return;
    const cfg = gh.config;
    const now = this.cell.time;
    let created = 0;
    for (const e of this.cell.entities.values()) {
      const wanted = wantedGhosts(e);
      const g = e.ghosting;
      if (g) {
        for (const [cell, link] of g.links) {
          const want = wanted.get(cell);
          const stale = link.state === "creating" && now - link.since > cfg.createTimeoutMs;
          const unwanted = !want && link.state === "live" && now - link.since >= cfg.minLifetimeMs;
          if (stale || unwanted || (want && (link.address !== want.address || link.cellapp !== want.cellapp))) {
            g.links.delete(cell);
            this.cell.host.ghosting!.send(link.address, CellMsg.deleteGhost, this.cell.spaceId, cell, e.id);
          }
        }
        if (g.links.size === 0) this.ghosted.delete(e);
      }
      for (const [cell, where] of wanted) {
        if (e.ghosting?.links.has(cell) || created >= cfg.maxCreatesPerPass) continue;
        created++;
        this.#createGhostAt(e, where);
      }
    }
  }

  #createGhostAt(e: Entity, where: CellAddress): void {
    const g = ghostingOf(e);
    const gh = this.cell.host.ghosting!;
    // Batches still queued this tick were not in the state: send them first, numbered, to the existing ghosts.
    this.#sendBatch(e);
    const link: GhostLink = { ...where, state: "creating", since: this.cell.time };
    g.links.set(where.cell, link);
    this.ghosted.add(e);
    const state = ghostStateOf(e, where.cell, this.cell.cellappId, gh.address);
    gh.ask(where.address, gh.config.createTimeoutMs, CellMsg.createGhost, state).then(
      () => {
        if (g.links.get(where.cell) === link) {
          link.state = "live";
          link.since = this.cell.time;
        }
      },
      (err) => {
        if (g.links.get(where.cell) === link) g.links.delete(where.cell);
        this.cell.host.log.warn(
          `ghost of ${e.type.name} ${e.id} in cell ${where.cell} (cellapp ${where.cellapp}) not created: ${
            (err as Error).message
          }`,
        );
      },
    );
  }

  /** A ghost in cell `cell` lost updates: create it again. */
  resyncGhost(id: number, cell: number): void {
    const e = this.cell.entities.get(id);
    const link = e?.ghosting?.links.get(cell);
    if (!e || !link) return;
    e.ghosting!.links.delete(cell);
    this.#createGhostAt(e, { cell: link.cell, cellapp: link.cellapp, address: link.address });
  }

  /** Sends each ghosted real's batch of this tick to its ghosts. */
  sendBatches(): void {
    for (const e of this.ghosted) this.#sendBatch(e);
  }

  #sendBatch(e: Entity): void {
    const ops = takeBatch(e);
    if (!ops) return;
    const seq = e.ghosting!.seq;
    for (const link of e.ghosting!.links.values()) {
      this.cell.host.ghosting!.send(link.address, CellMsg.ghostSync, this.cell.spaceId, link.cell, e.id, seq, ops);
    }
  }

  /** Tells every ghost of `e` to go (its real is destroyed). */
  dropGhosts(e: Entity): void {
    const g = e.ghosting;
    if (!g) return;
    for (const link of g.links.values()) {
      this.cell.host.ghosting!.send(link.address, CellMsg.deleteGhost, this.cell.spaceId, link.cell, e.id);
    }
    g.links.clear();
    this.ghosted.delete(e);
  }

  /**
   * Seed 004's offload check, every tick: a real more than the hysteresis
   * outside this cell's rect moves to the cell containing it, provided that
   * cell already holds its ghost (the ghost check sees to that).
   */
  checkOffloads(): void {
    const gh = this.cell.host.ghosting;
    if (!gh) return;
    for (const e of this.cell.entities.values()) {
      // A JavaScript continuation cannot move between processes: an entity awaiting answers stays until they settle.
      if (e.offloading || e.destroyed || e.offloadRetryAt > this.cell.time || e.pendingCalls > 0) continue;
      if (rectDistanceOutside(this.cell.rect, e.x, e.z) <= gh.config.offloadHysteresis) continue;
      const target = this.cell.layout[cellIndexAt(this.cell.geometry.tree, e.x, e.z)];
      const link = target && target.id !== this.cell.cellId ? e.ghosting?.links.get(target.id) : undefined;
      if (link?.state === "live") this.#offload(e, link);
    }
  }

  #offload(e: Entity, link: GhostLink): void {
    const gh = this.cell.host.ghosting!;
    this.#sendBatch(e); // everything before the hand-over reaches every ghost first
    // Its client gets this tick's frame from here; the witness's state travels from that point on.
    witnessOf(e)?.update();
    e.offloading = { cell: link.cell, cellapp: link.cellapp, address: link.address, held: [] };
    this.cell.callScript(e, "onLeavingCell");
    const state = offloadStateOf(e, link.cell, this.cell.cellappId, gh.address, this.cell.time);
    gh.ask(link.address, gh.config.offloadTimeoutMs, CellMsg.offload, state).then(
      () => this.#offloaded(e, link),
      (err) => this.#offloadFailed(e, link, err as Error),
    );
  }

  #offloaded(e: Entity, link: GhostLink): void {
    const held = e.offloading!.held;
    e.offloading = null;
    this.cell.offloadsOut++;
    const gh = this.cell.host.ghosting!;
    const others = [...e.ghosting!.links.values()].filter((l) => l.cell !== link.cell);
    const seq = e.ghosting!.seq;
    this.cell.entities.delete(e.id);
    this.ghosted.delete(e);
    this.cell.pause(e);
    // Its witness went along (the new cell restored it): it ends here without a word to the client.
    witnessOf(e)?.handOver();
    const to: CellAddress = { cell: link.cell, cellapp: link.cellapp, address: link.address };
    becomeGhost(e, to, seq);
    this.cell.ghosts.set(e.id, e);
    for (const l of others) {
      gh.send(l.address, CellMsg.realMoved, this.cell.spaceId, l.cell, e.id, to.cellapp, to.address, to.cell);
    }
    if (e.baseAddress !== null) this.cell.host.cellEntityMoved?.(e, link.address);
    for (const run of held) run(to);
  }

  #offloadFailed(e: Entity, link: GhostLink, err: Error): void {
    const held = e.offloading!.held;
    e.offloading = null;
    this.cell.host.log.warn(
      `${e.type.name} ${e.id} stays real in space ${this.cell.spaceId}: offload to cellapp ${link.cellapp} failed (cell ${link.cell}): ${err.message}`,
    );
    // A ghost that cannot take over is recreated by the next ghost check, if its cell is still there.
    e.ghosting?.links.delete(link.cell);
    e.offloadRetryAt = this.cell.time + this.cell.host.ghosting!.config.checkMs;
    this.cell.resume(e);
    this.cell.callScript(e, "onStayedInCell");
    for (const run of held) run(null);
  }

  /** Makes the ghost here of an offloading real the real (seed 002's migrate_in). */
  receiveOffload(state: OffloadState): void {
    const id = state.entity.id;
    const ghost = this.cell.ghosts.get(id);
    if (!ghost) throw new Error(`space ${this.cell.spaceId} holds no ghost of entity ${id} here to make real`);
    // Decodes the state before anything changes: a state that does not decode leaves the ghost a ghost.
    becomeReal(ghost, state);
    this.cell.ghosts.delete(id);
    const [x, y, z] = state.entity.position;
    [ghost.yaw, ghost.pitch, ghost.roll] = state.entity.direction;
    ghost.isOnGround = state.entity.isOnGround;
    ghost.y = y;
    this.cell.rangeList.move(ghost, x, z);
    this.cell.entities.set(id, ghost);
    this.cell.hasHadEntities = true;
    this.ghosted.add(ghost);
    this.cell.attachScript(ghost);
    this.cell.restoreControllers(ghost, state.entity.controllers as ControllerState[]);
    if (state.witness) this.#restoreWitness(ghost, state.witness);
    this.cell.offloadsIn++;
    this.cell.callScript(ghost, "onEnteredCell");
  }

  #restoreWitness(e: Entity, state: WitnessState): void {
    const sink = this.cell.host.clientSink?.(e);
    if (sink) Witness.restore(e, state, sink);
    else this.cell.host.log.warn(`${e.type.name} ${e.id} came with a witness, but this cell cannot reach its client`);
  }

  /** A ghost's real moved to another cell. */
  realMoved(id: number, to: CellAddress): void {
    const info = this.cell.ghosts.get(id)?.ghostInfo;
    if (!info) return;
    info.realCellapp = to.cellapp;
    info.realAddress = to.address;
    info.realCell = to.cell;
  }

  /** Creates (or refreshes) the ghost of a real of a neighbouring cell. */
  createGhost(state: GhostState): Entity {
    if (this.cell.entities.has(state.id)) {
      throw new Error(`entity ${state.id} is real in space ${this.cell.spaceId} here`);
    }
    const type = this.cell.host.registry.find(state.type);
    if (!type) throw new Error(`unknown entity type "${state.type}" for ghost ${state.id}`);
    const [x, y, z] = state.position;
    let ghost = this.cell.ghosts.get(state.id);
    if (!ghost) {
      const container = new PropertyContainer(type, "ghost", { entityId: state.id, readOnly: true });
      ghost = new Entity(state.id, type, this.cell, { x, y, z }, container);
      ghost.isReal = false;
      ghost.ghostInfo = new GhostInfo(state.realCellapp, state.realAddress, state.realCell, state.syncSeq);
      // A state that does not decode leaves nothing behind: the ghost is known only once it is whole.
      loadGhostState(ghost, state);
      this.cell.ghosts.set(state.id, ghost);
      this.cell.rangeList.add(ghost);
    } else {
      ghost.ghostInfo = new GhostInfo(state.realCellapp, state.realAddress, state.realCell, state.syncSeq);
      loadGhostState(ghost, state);
      ghost.y = y;
      this.cell.rangeList.move(ghost, x, z);
    }
    [ghost.yaw, ghost.pitch, ghost.roll] = state.direction;
    ghost.isOnGround = state.isOnGround;
    ghost.baseAddress = state.baseAddress ?? null;
    return ghost;
  }

  /** Applies a real's batch to its ghost here; asks for a resync when updates went missing. */
  receiveGhostSync(id: number, seq: number, ops: GhostOp[]): void {
    const ghost = this.cell.ghosts.get(id);
    if (!ghost) return;
    if (receiveBatch(ghost, seq, ops, this.cell.time, this.cell.host.ghosting!.config)) {
      const info = ghost.ghostInfo!;
      this.cell.host.log.warn(
        `ghost ${ghost.type.name} ${id} is missing updates after ${info.seq}; asking its real for a resync`,
      );
      this.cell.host.ghosting!.send(
        info.realAddress,
        CellMsg.ghostResync,
        this.cell.spaceId,
        info.realCell,
        id,
        this.cell.cellId,
      );
    }
  }

  /** The real no longer needs its ghost here. */
  deleteGhost(id: number): void {
    const ghost = this.cell.ghosts.get(id);
    if (!ghost) return;
    this.cell.ghosts.delete(id);
    ghost.destroyed = true;
    this.cell.disableWitness(ghost);
    this.cell.rangeList.remove(ghost);
  }
}
