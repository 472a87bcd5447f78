/**
 * Ghosts (docs/architecture.md, "Ghosts and hand-overs"). A real entity near a cell border keeps a ghost
 * in each neighbouring cell whose rect, grown by the ghost radius, contains
 * it; each tick it sends its ghosts what changed (volatile data, ghosted
 * properties, history events) as one numbered batch, which a ghost applies
 * strictly in order, buffering what arrives early.
 */
import {
  ByteReader,
  ByteWriter,
  type ChangeSink,
  decodeGhostState,
  encodeGhostState,
  readChange,
} from "../../core/def/mod.ts";
import { AUD, writeChange } from "../../core/def/mod.ts";
import { MAX_COORD, rectContains } from "../../core/geo/mod.ts";
import type { GhostOp, GhostState } from "../../core/wire/mod.ts";
import type { CellAddress } from "../cell_layout.ts";
import type { Entity } from "../entity.ts";
import { GhostInfo, RealGhosting } from "./ghost_records.ts";
import { historyOf } from "../witness/mod.ts";
import { scratch as processScratch } from "../../core/scratch.ts";

/** Ghosting settings of a cellapp. */
export interface GhostConfig {
  /** How far beyond a cell's rect its neighbours' entities are ghosted into it. */
  ghostRadius: number;
  /** How often each cell checks which ghosts its reals need. */
  checkMs: number;
  /** A ghost lives at least this long before it is destroyed for being out of range. */
  minLifetimeMs: number;
  /** At most this many ghost creations per cell per check. */
  maxCreatesPerPass: number;
  /** A creation without an answer is dropped after this long and tried again. */
  createTimeoutMs: number;
  /** A ghost behind its real this long (a batch missing), or holding this many early batches, asks for a resync. */
  resyncAfterMs: number;
  resyncAfterBatches: number;
  /**
   * A ghost asks this many times, waiting longer each time (from resyncAfterMs, doubling up to 8 times it), then
   * gives up and says so.
   */
  resyncMaxTries: number;
  /** A real moves cell once this far outside its rect (about 10 m, as in BigWorld). */
  offloadHysteresis: number;
  /** How long the old cell waits for the new one to take a real over. */
  offloadTimeoutMs: number;
  /** At most this many reals of a cell start a hand-over per tick (a partition that moved across a crowd). */
  maxOffloadsPerTick: number;
  /** How long a call to an entity in another cell may take before it rejects. */
  callTimeoutMs: number;
  /** How long a ghost whose real's cell died stays, frozen, for a restored real to take it over (frozen_ghosts.ts). */
  restoreTimeoutMs: number;
}

/** Defaults, as docs/architecture.md ("Ghosts and hand-overs") gives them. */
export const GHOST_DEFAULTS: GhostConfig = {
  ghostRadius: 520,
  checkMs: 1000,
  minLifetimeMs: 5000,
  maxCreatesPerPass: 200,
  createTimeoutMs: 10_000,
  resyncAfterMs: 2000,
  resyncAfterBatches: 32,
  resyncMaxTries: 6,
  offloadHysteresis: 10,
  offloadTimeoutMs: 30_000,
  maxOffloadsPerTick: 20,
  callTimeoutMs: 5000,
  restoreTimeoutMs: 5000,
};

export type { CellAddress } from "../cell_layout.ts";

export { GhostInfo, type GhostLink, RealGhosting } from "./ghost_records.ts";

/** The process's buffer for a ghost's property changes (core/scratch.ts). */
const scratch: ByteWriter = processScratch.writers.ghostChange;

/**
 * Starts ghosting `e`: its ghosted property changes and history events are
 * collected for its ghosts from now on.
 */
export function ghostingOf(e: Entity): RealGhosting {
  return e.ghosting ?? installGhosting(e, new RealGhosting());
}

/** Makes `g` the ghosting of real `e`: its changes are collected for its ghosts from now on. */
export function installGhosting(e: Entity, g: RealGhosting): RealGhosting {
  e.ghosting = g;
  const history = historyOf(e);
  history.listener = (ev) => {
    if (g.links.size > 0) g.ops.push([2, ev.seq, ev.prop, ev.level, ev.distance, ev.bytes]);
  };
  const next = e.container.sink;
  const capture: ChangeSink = {
    onChange(prop, path, value, start, end) {
      if (g.links.size > 0 && (prop.mask & AUD.ghost) !== 0) {
        writeChange(scratch.reset(), prop, path, value, start, end, "internal");
        g.ops.push([1, scratch.toBytes()]);
      }
      next?.onChange(prop, path, value, start, end);
    },
  };
  e.container.sink = capture;
  return g;
}

/** The state a ghost of `e` is created with in cell `cellId`. */
export function ghostStateOf(e: Entity, cellId: number, realCellapp: number, realAddress: string): GhostState {
  const g = ghostingOf(e);
  const h = historyOf(e);
  const events: GhostState["history"]["events"] = [];
  for (let i = h.head; i < h.events.length; i++) {
    const ev = h.events[i];
    if (ev) events.push([ev.seq, ev.prop, ev.level, ev.distance, ev.bytes]);
  }
  return {
    spaceId: e.cell.spaceId,
    cellId,
    id: e.id,
    type: e.type.name,
    position: [e.x, e.y, e.z],
    direction: [e.yaw, e.pitch, e.roll],
    isOnGround: e.isOnGround,
    props: encodeGhostState(e.container),
    syncSeq: g.seq,
    epoch: e.epoch,
    realCellapp,
    realAddress,
    realCell: e.cell.cellId,
    baseAddress: e.baseAddress,
    history: { life: h.life, lastSeq: h.lastSeq, trimmedTo: h.trimmedTo, propStamps: [...h.propStamps], events },
  };
}

/** Fills a new ghost's properties and history from its real's state. */
export function loadGhostState(ghost: Entity, state: GhostState): void {
  const fresh = decodeGhostState(ghost.type, state.props, ghost.id);
  for (let i = 0; i < fresh.values.length; i++) {
    if (fresh.values[i] !== undefined) ghost.container.load(i, fresh.values[i]);
  }
  const h = historyOf(ghost);
  if (state.history.life !== undefined) h.life = state.history.life; // the real's numbering, so the real's life
  for (const [seq, prop, level, distance, bytes] of state.history.events) {
    if (seq > h.lastSeq) h.addRemote({ seq, prop, level, distance, bytes });
  }
  h.lastSeq = Math.max(h.lastSeq, state.history.lastSeq);
  h.trimmedTo = Math.max(h.trimmedTo, state.history.trimmedTo);
  state.history.propStamps.forEach((s, i) => (h.propStamps[i] = Math.max(h.propStamps[i] ?? 0, s)));
}

/**
 * Collects `e`'s volatile change for its ghosts and returns this tick's batch
 * (null when nothing changed); the caller sends it to every link.
 */
export function takeBatch(e: Entity): GhostOp[] | null {
  const g = e.ghosting;
  if (!g) return null;
  if (g.links.size === 0) {
    // Its last ghost went before they were sent: a ghost made later starts from the state then, and these
    // changes, older than that state, must not reach it. They still take a number, so that a ghost that went (and
    // is made again) cannot take the batch after them for the one after what it has.
    if (g.ops.length > 0) g.seq++;
    g.ops.length = 0;
    return null;
  }
  if (
    e.x !== g.lastX || e.y !== g.lastY || e.z !== g.lastZ || e.yaw !== g.lastYaw || e.pitch !== g.lastPitch ||
    e.roll !== g.lastRoll
  ) {
    g.ops.push([0, e.x, e.y, e.z, e.yaw, e.pitch, e.roll, e.isOnGround]);
    g.lastX = e.x;
    g.lastY = e.y;
    g.lastZ = e.z;
    g.lastYaw = e.yaw;
    g.lastPitch = e.pitch;
    g.lastRoll = e.roll;
  }
  if (g.ops.length === 0) return null;
  const ops = g.ops;
  g.ops = [];
  g.seq++;
  return ops;
}

/**
 * Why a batch cannot be applied (a pose out of the world, or not numbers), or null. Checked before any of it is: a
 * ghost's height is not bounded by the range list, and one so far out that a witness's distance to it overflows
 * would take that witness's priorities with it (docs/architecture.md, "The witness").
 */
export function badGhostOps(ops: readonly GhostOp[]): string | null {
  // Read in place: every ghost gets a batch each tick, so nothing is copied unless the batch is refused.
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i];
    if (op[0] !== 0) continue;
    let ok = op.length >= 7;
    for (let k = 1; ok && k <= 6; k++) {
      const v = op[k];
      ok = typeof v === "number" && (k <= 3 ? v >= -MAX_COORD && v <= MAX_COORD : Number.isFinite(v));
    }
    if (!ok) {
      return `op ${i}: pose ${op.slice(1, 7).map(String).join(", ")} is not a position within ±${MAX_COORD} m and ` +
        `a direction`;
    }
    if (typeof op[7] !== "boolean") return `op ${i}: on-ground flag ${String(op[7])} is not a boolean`;
  }
  return null;
}

/**
 * Applies a batch to a ghost in order: the next one at once (then any early
 * ones it unblocks), a later one buffered, an old or repeated one dropped.
 * Returns true when so many early batches wait that the ghost should ask its
 * real for a resync now rather than at its next check (resyncDue).
 */
export function receiveBatch(ghost: Entity, seq: number, ops: GhostOp[], now: number, cfg: GhostConfig): boolean {
  const info = ghost.ghostInfo!;
  info.heardAt = now;
  if (seq > info.knownSeq) info.knownSeq = seq;
  if (seq <= info.seq) return false;
  if (seq > info.seq + 1) {
    if (!info.pending.has(seq)) info.pending.set(seq, ops);
    if (Number.isNaN(info.behindSince)) info.behindSince = now;
    return info.pending.size >= cfg.resyncAfterBatches && now >= info.nextResyncAt &&
      info.resyncTries < cfg.resyncMaxTries;
  }
  applyOps(ghost, ops);
  info.seq = seq;
  applyPending(ghost, now);
  return false;
}

/** Applies the early batches that now follow on (after a batch or a fresh state), and drops those it passed. */
export function applyPending(ghost: Entity, now: number): void {
  const info = ghost.ghostInfo!;
  for (let next = info.pending.get(info.seq + 1); next; next = info.pending.get(info.seq + 1)) {
    info.pending.delete(info.seq + 1);
    applyOps(ghost, next);
    info.seq++;
  }
  for (const s of info.pending.keys()) if (s <= info.seq) info.pending.delete(s);
  // Progress: a ghost still behind gets the full wait again before it asks.
  if (info.behind) info.behindSince = now;
  else caughtUp(info);
}

/** The real announced `seq` as its latest batch: a ghost short of it has lost one, even if no later batch comes. */
export function noteAnnounced(info: GhostInfo, seq: number, now: number): void {
  if (seq <= info.knownSeq) return;
  info.knownSeq = seq;
  if (Number.isNaN(info.behindSince)) info.behindSince = now;
}

/**
 * Whether a ghost has heard nothing from its real (which announces itself to its ghosts at every check) for
 * resyncAfterMs beyond two checks: a delete or its batches were lost with a channel closed as dead (a cellapp
 * stalled past deadAfterMs), and the real may no longer keep it. A ghost not checked before counts from now.
 */
export function isSilent(info: GhostInfo, now: number, cfg: GhostConfig): boolean {
  if (Number.isNaN(info.heardAt)) info.heardAt = now;
  return now - info.heardAt >= cfg.resyncAfterMs + 2 * cfg.checkMs;
}

/**
 * Whether a ghost should ask its real for a resync now: it has been behind
 * for resyncAfterMs, or silent (isSilent), its last request had its time to be
 * answered, and it has tries left. The real makes a ghost it keeps again, and
 * deletes one it does not keep. A ghost up to date is reset.
 */
export function resyncDue(info: GhostInfo, now: number, cfg: GhostConfig): boolean {
  const silent = isSilent(info, now, cfg);
  if (!info.behind && !silent) {
    caughtUp(info);
    return false;
  }
  if (Number.isNaN(info.behindSince)) info.behindSince = silent ? info.heardAt : now;
  return now - info.behindSince >= cfg.resyncAfterMs && now >= info.nextResyncAt &&
    info.resyncTries < cfg.resyncMaxTries;
}

/** Counts a resync request sent now; the next waits longer (doubling, up to 8 times resyncAfterMs). */
export function resyncAsked(info: GhostInfo, now: number, cfg: GhostConfig): void {
  info.resyncTries++;
  info.nextResyncAt = now + cfg.resyncAfterMs * Math.min(2 ** (info.resyncTries - 1), 8);
}

function caughtUp(info: GhostInfo): void {
  info.behindSince = NaN;
  info.resyncTries = 0;
  info.nextResyncAt = 0;
}

/**
 * Whether news about a real, sent when it was at (`epoch`, batch `seq`), is
 * older than what the ghost already has: a message from a cell the real has
 * since left, overtaken by one from where it went.
 */
export function isStale(info: GhostInfo, epoch: number, seq = Infinity): boolean {
  return epoch < info.epoch || (epoch === info.epoch && seq < info.seq);
}

function applyOps(ghost: Entity, ops: GhostOp[]): void {
  const h = historyOf(ghost);
  for (const op of ops) {
    switch (op[0]) {
      case 0: {
        const [, x, y, z, yaw, pitch, roll, onGround] = op as [
          0,
          number,
          number,
          number,
          number,
          number,
          number,
          boolean,
        ];
        ghost.yaw = yaw;
        ghost.pitch = pitch;
        ghost.roll = roll;
        ghost.isOnGround = onGround;
        ghost.y = y;
        ghost.cell.rangeList.move(ghost, x, z);
        break;
      }
      case 1: {
        const rec = readChange(new ByteReader(op[1] as Uint8Array), ghost.type, "internal");
        ghost.container.apply(rec);
        break;
      }
      case 2: {
        const [, seq, prop, level, distance, bytes] = op as [2, number, number, number, number, Uint8Array];
        if (seq > h.lastSeq) h.addRemote({ seq, prop, level, distance, bytes });
        break;
      }
    }
  }
}

/**
 * The other cells of `e`'s space whose grown rect contains it, by cell id
 * (cells of `e`'s own cellapp included).
 */
export function wantedGhosts(e: Entity): Map<number, CellAddress> {
  const out = new Map<number, CellAddress>();
  for (const a of e.cell.ghostAreas) if (rectContains(a.area, e.x, e.z)) out.set(a.cell, a);
  return out;
}
