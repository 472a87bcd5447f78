/**
 * A cell's borders (docs/architecture.md, "Ghosts and hand-overs"): the ghosts its reals keep in
 * neighbouring cells, and the ghosts it holds of theirs, kept in step with
 * their reals wherever those go. Offloading a real that crossed into a
 * neighbour is offload.ts's.
 */
import { errorText } from "../../core/errors.ts";
import { ByteWriter, PropertyContainer } from "../../core/def/mod.ts";
import { Throttle } from "../../core/log.ts";
import { rectContains } from "../../core/geo/mod.ts";
import {
  CellMsg,
  encodeGhostOps,
  type GhostOp,
  type GhostState,
  type OffloadState,
  writeGhostSync,
} from "../../core/wire/mod.ts";
import type { CellHost } from "../cell_host.ts";
import { Entity, type EntityHost } from "../entity.ts";
import {
  applyPending,
  badGhostOps,
  type CellAddress,
  type GhostConfig,
  GhostInfo,
  ghostingOf,
  type GhostLink,
  ghostStateOf,
  isSilent,
  isStale,
  loadGhostState,
  noteAnnounced,
  type RealGhosting,
  receiveBatch,
  resyncAsked,
  resyncDue,
  takeBatch,
  wantedGhosts,
} from "./ghosts.ts";
import { applyHandOverWrites } from "./handover.ts";
import type { FencedWrite } from "./handover_fence.ts";
import { CellOffloads, type OffloadCell } from "./offload.ts";
import { enterLoop, leaveEntity, switchEntity } from "../load/entity_load.ts";
import {
  continuesFrozen,
  dropGhost,
  expireFrozenGhost,
  type FrozenGhostsCell,
  isFrozen,
  realCellLives,
  reportExpired,
} from "./frozen_ghosts.ts";
import { scratch as processScratch } from "../../core/scratch.ts";

/** Where a batch's ops are encoded for the ghostSyncs records (reused: a record copies them at once). */
const opsScratch: ByteWriter = processScratch.writers.ghostOps;

/** What a cell's borders need of it: it hosts the ghosts they make, runs its offloads and holds frozen ghosts. */
export interface BordersCell extends EntityHost, OffloadCell, FrozenGhostsCell {
  readonly entities: Map<number, Entity>;
  readonly ghosts: Map<number, Entity>;
  readonly host: CellHost;
  /** Whether the space's tree has this cell. */
  readonly inTree: boolean;
  /** Resyncs its ghosts asked their reals for, so far. */
  ghostResyncs: number;
}

/** Where the real of an entity that left this cell went (as far as the cell knew), and until when that is kept. */
interface Departed extends CellAddress {
  spaceId: number;
  until: number;
}

/** The ghost and offload logic of one cell. */
export class CellBorders {
  /** Reals of the cell that have at least one ghost. */
  readonly ghosted: Set<Entity> = new Set();
  readonly #offloads: CellOffloads;
  /** Entities that left the cell (teleported away, or whose ghost went), for messages about them still on the way. */
  readonly #departed = new Map<number, Departed>();
  /** Lines about ghost syncs dropped as malformed, at most once a minute (the rest counted). */
  readonly #badSyncLog = new Throttle(60_000);

  constructor(private readonly cell: BordersCell) {
    this.#offloads = new CellOffloads(cell);
  }

  /**
   * The periodic ghost check: each
   * real gets a ghost in every neighbour cell whose rect grown by the ghost
   * radius contains it, and loses ghosts outside that area once they lived
   * the minimum time; creations per pass are capped, unanswered ones retried.
   * Each real tells its ghosts its latest batch number, and each ghost held
   * here that is behind asks its real for a resync.
   */
  checkGhosts(): void {
    const gh = this.cell.host.ghosting;
    const cfg = gh.config;
    const now = this.cell.time;
    let created = 0;
    for (const e of this.cell.entities.values()) {
      // A real being handed over keeps the ghosts it was sent with: the new real takes them over as they are.
      if (e.offloading) continue;
      const wanted = wantedGhosts(e);
      const g = e.ghosting;
      if (g) {
        for (const [cell, link] of g.links) {
          const want = wanted.get(cell);
          const stale = link.state === "creating" && now - link.since > cfg.createTimeoutMs;
          const unwanted = !want && link.state === "live" && now - link.since >= cfg.minLifetimeMs;
          if (stale || unwanted || (want && (link.address !== want.address || link.cellapp !== want.cellapp))) {
            g.links.delete(cell);
            gh.send(link.address, CellMsg.deleteGhost, this.cell.spaceId, cell, e.id, e.epoch);
          }
        }
        if (g.links.size === 0) this.ghosted.delete(e);
        else this.#announce(e, g);
      }
      for (const [cell, where] of wanted) {
        if (e.ghosting?.links.has(cell) || created >= cfg.maxCreatesPerPass) continue;
        created++;
        this.#createGhostAt(e, where);
      }
    }
    this.#checkHeldGhosts(now, cfg);
    for (const [id, d] of this.#departed) if (d.until <= now) this.#departed.delete(id);
  }

  /**
   * Entity `id` left this cell for cell `to` of space `spaceId`: messages about it that arrive later (sent before
   * their senders knew) are sent on there, for as long as a request may take (offloadTimeoutMs).
   */
  noteDeparted(id: number, to: CellAddress, spaceId: number): void {
    const until = this.cell.time + this.cell.host.ghosting.config.offloadTimeoutMs;
    this.#departed.set(id, { cell: to.cell, cellapp: to.cellapp, address: to.address, spaceId, until });
  }

  /** Where entity `id`, which is neither real nor a ghost here, went when it left, if that is recent. */
  departedTo(id: number): (CellAddress & { spaceId: number }) | undefined {
    return this.#departed.get(id);
  }

  /**
   * Tells the ghosts of `e` its latest batch number, at every check: one that lost a batch then knows, one that
   * hears nothing for long knows it was lost track of (isSilent), and the frozen ghosts of a real of a cell that left
   * the tree (the other cells froze them as if its cellapp had died) do not expire until it has been handed over.
   */
  #announce(e: Entity, g: RealGhosting): void {
    g.announcedSeq = g.seq;
    for (const l of g.links.values()) {
      this.cell.host.ghosting.send(l.address, CellMsg.ghostSeq, this.cell.spaceId, l.cell, e.id, e.epoch, g.seq);
    }
  }

  /**
   * Each ghost held here that has been behind its real long enough asks it for a resync (again, until answered); a
   * frozen one (its real's cell is gone) asks nothing, and goes once the restore timeout passed.
   */
  #checkHeldGhosts(now: number, cfg: GhostConfig): void {
    let expired = 0;
    for (const ghost of this.cell.ghosts.values()) {
      const info = ghost.ghostInfo!;
      if (isFrozen(info)) expired += expireFrozenGhost(this.cell, ghost, now, cfg.restoreTimeoutMs) ? 1 : 0;
      else if (resyncDue(info, now, cfg)) this.#askResync(ghost);
      else if (info.resyncTries === cfg.resyncMaxTries && now >= info.nextResyncAt && isSilent(info, now, cfg)) {
        // Nobody answers for its real: kept, it would stand still in every view here for good; observers see it go.
        this.cell.host.log.warn(
          `ghost ${ghost.type.name} ${ghost.id} in space ${this.cell.spaceId} cell ${this.cell.cellId} dropped: ` +
            `nothing heard from its real for ${now - info.heardAt} ms, and ${cfg.resyncMaxTries} resync requests ` +
            `to cell ${info.realCell} (cellapp ${info.realCellapp}) went unanswered`,
        );
        this.noteDeparted(
          ghost.id,
          { cell: info.realCell, cellapp: info.realCellapp, address: info.realAddress },
          this.cell.spaceId,
        );
        dropGhost(this.cell, ghost);
      } else if (info.behind && info.resyncTries === cfg.resyncMaxTries && now >= info.nextResyncAt) {
        info.resyncTries++; // said once
        this.cell.host.log.error(
          `ghost ${ghost.type.name} ${ghost.id} in space ${this.cell.spaceId} cell ${this.cell.cellId} stays behind ` +
            `its real (batch ${info.seq} of ${info.knownSeq}): ${cfg.resyncMaxTries} resync requests to cell ` +
            `${info.realCell} (cellapp ${info.realCellapp}) went unanswered`,
        );
      }
    }
    reportExpired(this.cell, expired, cfg.restoreTimeoutMs);
  }

  #askResync(ghost: Entity): void {
    const info = ghost.ghostInfo!;
    const gh = this.cell.host.ghosting;
    resyncAsked(info, this.cell.time, gh.config);
    this.cell.ghostResyncs++;
    this.cell.host.log.warn(
      `ghost ${ghost.type.name} ${ghost.id} is missing updates after ${info.seq} (the real is at ${info.knownSeq} or ` +
        `more); asking its real in cell ${info.realCell} for a resync (request ${info.resyncTries})`,
    );
    gh.send(info.realAddress, CellMsg.ghostResync, this.cell.spaceId, info.realCell, ghost.id, this.cell.cellId);
  }

  #createGhostAt(e: Entity, where: CellAddress): void {
    const g = ghostingOf(e);
    const gh = this.cell.host.ghosting;
    // Batches still queued this tick were not in the state: send them first, numbered, to the existing ghosts.
    this.sendBatchOf(e);
    const link: GhostLink = {
      cell: where.cell,
      cellapp: where.cellapp,
      address: where.address,
      state: "creating",
      since: this.cell.time,
    };
    g.links.set(where.cell, link);
    this.ghosted.add(e);
    const state = ghostStateOf(e, where.cell, this.cell.cellappId, gh.address);
    gh.ask(where.address, gh.config.createTimeoutMs, CellMsg.createGhost, state).then(
      () => {
        if (g.links.get(where.cell) !== link) return;
        link.state = "live";
        link.since = this.cell.time;
        // Batches sent meanwhile may have reached the cell before the ghost: it hears the latest number again.
        if (g.seq !== state.syncSeq) g.announcedSeq = -1;
      },
      (err) => {
        if (g.links.get(where.cell) !== link) return;
        g.links.delete(where.cell);
        // In case it was made after all: a ghost the real does not keep in step must not stay.
        gh.send(where.address, CellMsg.deleteGhost, this.cell.spaceId, where.cell, e.id, e.epoch);
        this.cell.host.log.warn(
          `ghost of ${e.type.name} ${e.id} in cell ${where.cell} (cellapp ${where.cellapp}) not created: ${
            errorText(err)
          }`,
        );
      },
    );
  }

  /**
   * A ghost of entity `id` in cell `ghostCell` lost batches: the real creates
   * it again. A request that reaches a cell the real has left goes on to where
   * the real went (a real being handed over answers once it settles).
   */
  resyncGhost(id: number, ghostCell: number): void {
    const gh = this.cell.host.ghosting;
    const spaceId = this.cell.spaceId;
    const e = this.cell.entities.get(id);
    if (e?.offloading) {
      e.offloading.held.push((moved) =>
        moved
          ? gh.send(moved.address, CellMsg.ghostResync, spaceId, moved.cell, id, ghostCell)
          : this.resyncGhost(id, ghostCell)
      );
      return;
    }
    if (e) {
      const link = e.ghosting?.links.get(ghostCell);
      if (link?.state === "creating") return; // a fresh state is on its way
      if (link) {
        e.ghosting!.links.delete(ghostCell);
        return this.#createGhostAt(e, link);
      }
      // The real keeps no ghost there (the ghost outlived a delete it never got): make it one, or end it.
      const area = this.cell.ghostAreas.find((a) => a.cell === ghostCell);
      if (!area) return;
      if (rectContains(area.area, e.x, e.z)) return this.#createGhostAt(e, area);
      gh.send(area.address, CellMsg.deleteGhost, spaceId, ghostCell, id, e.epoch);
      return;
    }
    const info = this.cell.ghosts.get(id)?.ghostInfo;
    if (info) return gh.send(info.realAddress, CellMsg.ghostResync, spaceId, info.realCell, id, ghostCell);
    const gone = this.#departed.get(id);
    // Only within the space: a real in another space keeps no ghost here.
    if (gone?.spaceId === spaceId) return gh.send(gone.address, CellMsg.ghostResync, spaceId, gone.cell, id, ghostCell);
    this.cell.host.log.debug(`resync of entity ${id} for cell ${ghostCell} dropped: no such entity in cell here`);
  }

  /**
   * Sends each ghosted real's batch of this tick to its ghosts (a real being handed over sends nothing), each
   * charged to its real (cell/load/).
   */
  sendBatches(): void {
    if (this.ghosted.size === 0) return;
    enterLoop();
    try {
      for (const e of this.ghosted) {
        if (e.offloading) continue;
        switchEntity(e);
        this.sendBatchOf(e);
      }
    } finally {
      leaveEntity();
    }
  }

  /** Sends `e`'s batch of changes so far to its ghosts, if it has one. */
  sendBatchOf(e: Entity): void {
    const ops = takeBatch(e);
    if (!ops) return;
    const seq = e.ghosting!.seq;
    const gh = this.cell.host.ghosting;
    // Encoded once, copied into the tick's record for each peer cellapp (ghost_sync_records.ts).
    let encoded: Uint8Array | null = null;
    for (const link of e.ghosting!.links.values()) {
      const w = gh.ghostRecord(link.address);
      if (w === null) {
        gh.send(link.address, CellMsg.ghostSync, this.cell.spaceId, link.cell, e.id, seq, ops);
        continue;
      }
      if (encoded === null) {
        encodeGhostOps(opsScratch.reset(), ops);
        encoded = opsScratch.bytes();
      }
      writeGhostSync(w, this.cell.spaceId, link.cell, e.id, seq, encoded);
    }
  }

  /** Tells every ghost of `e` to go (its real is destroyed, or left the space). */
  dropGhosts(e: Entity): void {
    const g = e.ghosting;
    if (!g) return;
    for (const link of g.links.values()) {
      this.cell.host.ghosting.send(link.address, CellMsg.deleteGhost, this.cell.spaceId, link.cell, e.id, e.epoch);
    }
    g.links.clear();
    this.ghosted.delete(e);
  }

  /** The offload check; see CellOffloads. */
  checkOffloads(): void {
    this.#offloads.check();
  }

  /** Makes the ghost here of an offloading real the real; see CellOffloads. */
  receiveOffload(state: OffloadState): void | Promise<void> {
    return this.#offloads.receive(state);
  }

  /**
   * What was done to entity `id` while it was handed over to this cell: done
   * again here, or sent on to where the real went since.
   */
  receiveHandOverWrites(id: number, writes: FencedWrite[]): void {
    const e = this.cell.entities.get(id);
    if (e) return applyHandOverWrites(this.cell, e, writes);
    const gh = this.cell.host.ghosting;
    const info = this.cell.ghosts.get(id)?.ghostInfo;
    if (info) return gh.send(info.realAddress, CellMsg.handOverWrites, this.cell.spaceId, info.realCell, id, writes);
    const gone = this.#departed.get(id);
    if (gone) return gh.send(gone.address, CellMsg.handOverWrites, gone.spaceId, gone.cell, id, writes);
    this.cell.host.log.warn(
      `${writes.length} changes made to entity ${id} during its hand-over to cell ${this.cell.cellId} of space ` +
        `${this.cell.spaceId} are dropped: the entity is no longer there (destroyed)`,
    );
  }

  /** A ghost's real moved to another cell (as of `epoch`); older news is ignored. */
  realMoved(id: number, to: CellAddress, epoch: number): void {
    const info = this.cell.ghosts.get(id)?.ghostInfo;
    if (!info || epoch <= info.epoch) return;
    info.epoch = epoch;
    info.realCellapp = to.cellapp;
    info.realAddress = to.address;
    info.realCell = to.cell;
    // Frozen for a cell the real had already left: it lives on where it went.
    if (isFrozen(info) && realCellLives(this.cell, info)) info.frozenSince = NaN;
  }

  /**
   * Creates (or refreshes) the ghost of a real of a neighbouring cell. A state
   * older than the one the ghost has (sent from a cell the real has left
   * since) changes nothing. A frozen ghost (its real's cell died) is taken
   * over by the restored real's state in place when that continues its event
   * numbering (observers see no leave), and is replaced otherwise.
   */
  createGhost(state: GhostState): Entity {
    if (this.cell.entities.has(state.id)) {
      throw new Error(`entity ${state.id} is real in space ${this.cell.spaceId} here`);
    }
    const type = this.cell.host.registry.find(state.type);
    if (!type) throw new Error(`unknown entity type "${state.type}" for ghost ${state.id}`);
    const [x, y, z] = state.position;
    const info = new GhostInfo(state.realCellapp, state.realAddress, state.realCell, state.syncSeq, state.epoch);
    let ghost = this.cell.ghosts.get(state.id);
    if (!ghost) {
      const container = new PropertyContainer(type, "ghost", { entityId: state.id, readOnly: true });
      ghost = new Entity(state.id, type, this.cell, { x, y, z }, container);
      ghost.isReal = false;
      ghost.ghostInfo = info;
      // A state that does not decode leaves nothing behind: the ghost is known only once it is whole.
      loadGhostState(ghost, state);
      this.cell.ghosts.set(state.id, ghost);
      this.cell.rangeList.add(ghost);
    } else {
      const old = ghost.ghostInfo!;
      const frozen = isFrozen(old);
      if (frozen && !continuesFrozen(ghost, state)) {
        dropGhost(this.cell, ghost);
        return this.createGhost(state);
      }
      if (!frozen && isStale(old, state.epoch, state.syncSeq)) return ghost;
      loadGhostState(ghost, state);
      // Batches of the same real newer than the state, which came ahead of it, still apply after it.
      if (!frozen && state.epoch === old.epoch) {
        for (const [s, ops] of old.pending) if (s > state.syncSeq) info.pending.set(s, ops);
        info.knownSeq = Math.max(old.knownSeq, state.syncSeq);
      }
      ghost.ghostInfo = info;
      ghost.y = y;
      this.cell.rangeList.move(ghost, x, z);
    }
    [ghost.yaw, ghost.pitch, ghost.roll] = state.direction;
    ghost.isOnGround = state.isOnGround;
    ghost.baseAddress = state.baseAddress ?? null;
    applyPending(ghost, this.cell.time);
    return ghost;
  }

  /**
   * Applies a real's batch to its ghost here; a ghost missing many asks for a
   * resync at once. Batches from the new real that overtake the answer to
   * this cell's hand-over of it apply once the old real here is its ghost.
   */
  receiveGhostSync(id: number, seq: number, ops: GhostOp[]): void {
    const bad = badGhostOps(ops);
    if (bad !== null) {
      // Dropped whole: the ghost knows it is behind and asks its real for a resync, which brings what it missed.
      const ghost = this.cell.ghosts.get(id);
      if (ghost) noteAnnounced(ghost.ghostInfo!, seq, this.cell.time);
      const held = this.#badSyncLog.take(0);
      if (held !== null) {
        this.cell.host.log.warn(
          `ghost sync ${seq} of entity ${id} in space ${this.cell.spaceId} cell ${this.cell.cellId} dropped: ${bad}` +
            Throttle.note(held),
        );
      }
      return;
    }
    const ghost = this.cell.ghosts.get(id);
    if (!ghost) return this.#whenGhost(id, () => this.receiveGhostSync(id, seq, ops));
    if (receiveBatch(ghost, seq, ops, this.cell.time, this.cell.host.ghosting.config)) this.#askResync(ghost);
  }

  /** The real of ghost `id`, at `epoch`, says its latest batch is `seq`. */
  receiveGhostSeq(id: number, epoch: number, seq: number): void {
    const ghost = this.cell.ghosts.get(id);
    if (!ghost) return this.#whenGhost(id, () => this.receiveGhostSeq(id, epoch, seq));
    const info = ghost.ghostInfo!;
    if (epoch < info.epoch) return;
    info.heardAt = this.cell.time;
    noteAnnounced(info, seq, this.cell.time);
    // Its real lives (its cell left the tree, but not by dying): the frozen ghost waits on for its hand-over.
    if (isFrozen(info)) info.frozenSince = this.cell.time;
  }

  /**
   * The real (as of `epoch`; any, when not given) no longer needs its ghost
   * here. A delete from a real older than the one the ghost knows is ignored.
   */
  deleteGhost(id: number, epoch = Infinity): void {
    const ghost = this.cell.ghosts.get(id);
    if (!ghost) return this.#whenGhost(id, () => this.deleteGhost(id, epoch));
    const info = ghost.ghostInfo!;
    if (isStale(info, epoch)) return;
    const to = { cell: info.realCell, cellapp: info.realCellapp, address: info.realAddress };
    this.noteDeparted(id, to, this.cell.spaceId);
    this.cell.ghosts.delete(id);
    ghost.destroyed = true;
    this.cell.disableWitness(ghost);
    this.cell.rangeList.remove(ghost);
  }

  /** Runs `run` once entity `id`, being handed over from here, is a ghost here (dropped if it stays real). */
  #whenGhost(id: number, run: () => void): void {
    this.cell.entities.get(id)?.offloading?.held.push((moved) => moved && run());
  }
}
