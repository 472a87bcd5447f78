/**
 * What a witness writes for one entity cache when the priority queue reaches it: enter, create, leave, and for a
 * created entity the events since its last send (or a refresh when the history no longer reaches back), its
 * volatile data and its detail-level changes (seed 000's sendQueueElement, seed 001's writeClientUpdateDataToBundle
 * and updateDetailLevel).
 */
import type { ByteWriter, PropertyDef } from "../core/def/mod.ts";
import {
  DIR_NONE,
  DIR_Y,
  DIR_YP,
  DIR_YPR,
  POS_FULL,
  POS_NONE,
  POS_XYZ,
  POS_XZ,
  writeCreate,
  writeDetailLevel,
  writeEnter,
  writeLeave,
  writeMethod,
  writeProperty,
  writeVolatile,
} from "../core/def/aoi_protocol.ts";
import { CREATED, type EntityCache } from "./entity_cache.ts";

/** Counters a witness keeps, for tests, benchmarks and the admin API. */
export interface WitnessStats {
  frames: number;
  bytes: number;
  enters: number;
  creates: number;
  leaves: number;
  propertyEvents: number;
  methodEvents: number;
  detailChanges: number;
  refreshes: number;
  volatileUpdates: number;
  fullPositions: number;
  /** Cache elements sent (creates and updates), per entity id when `perEntity` is on. */
  sends: number;
  badInputs: number;
  timeouts: number;
}

/** Fresh zeroed stats. */
export function newStats(): WitnessStats {
  return {
    frames: 0,
    bytes: 0,
    enters: 0,
    creates: 0,
    leaves: 0,
    propertyEvents: 0,
    methodEvents: 0,
    detailChanges: 0,
    refreshes: 0,
    volatileUpdates: 0,
    fullPositions: 0,
    sends: 0,
    badInputs: 0,
    timeouts: 0,
  };
}

/** The witness state the send functions use (the witness itself implements it). */
export interface SendContext {
  readonly w: ByteWriter;
  readonly stats: WitnessStats;
  /** Reference position the client knows, and the packed-position scale. */
  rx: number;
  ry: number;
  rz: number;
  scale: number;
  /** Scratch list of properties to send (reused). */
  readonly props: PropertyDef[];
}

/** Whether an entity type has any volatile data (and so deserves an id alias). */
export function hasVolatile(c: EntityCache): boolean {
  return c.posDist >= 0 || c.yawDist >= 0;
}

/** Seed 000's enterAoI: id and alias. */
export function sendEnter(ctx: SendContext, c: EntityCache): void {
  writeEnter(ctx.w, c.entity.id, c.alias);
  ctx.stats.enters++;
}

/** Seed 000's leaveAoI: the per-level stamps (only if the client had the entity created). */
export function sendLeave(ctx: SendContext, c: EntityCache): void {
  const s = c.lodStamps;
  if (c.state === CREATED) {
    // Levels at or beyond the current one are up to date with the last event sent.
    for (let i = c.detailLevel; i < s.length; i++) s[i] = c.lastEventNumber;
    writeLeave(ctx.w, c.entity.id, s, s.length);
  } else writeLeave(ctx.w, c.entity.id, s, 0);
  ctx.stats.leaves++;
}

/** Collects into ctx.props the other-client properties with level in [from, to) changed after stamps[level]. */
function collect(ctx: SendContext, c: EntityCache, from: number, to: number, after: number[] | number): number {
  const props = c.entity.type.propertiesFor("otherClients");
  const stamps = c.history.propStamps, out = ctx.props;
  let n = 0;
  for (let i = 0; i < props.length; i++) {
    const p = props[i], l = p.detailLevel;
    if (l < from || l >= to) continue;
    if (stamps[p.index] > (typeof after === "number" ? after : after[l])) out[n++] = p;
  }
  return n;
}

/**
 * Seed 000's sendCreate: position, direction and the outermost level's properties changed since the client's stamp
 * for it (all of them without a cached copy); nearer levels follow through updateDetail.
 */
export function sendCreate(ctx: SendContext, c: EntityCache, dist: number): void {
  const e = c.entity, outer = c.lodStamps.length - 1;
  c.state = CREATED;
  c.setDetailLevel(outer);
  c.lastEventNumber = c.history.lastSeq;
  const n = collect(ctx, c, outer, outer + 1, c.lodStamps);
  writeCreate(ctx.w, e.id, e.type.id, e.x, e.y, e.z, e.yaw, e.pitch, e.roll, outer, e.container.values, ctx.props, n);
  c.vx = e.x;
  c.vy = e.y;
  c.vz = e.z;
  c.vyaw = e.yaw;
  c.vpitch = e.pitch;
  c.vroll = e.roll;
  ctx.stats.creates++;
  updateDetail(ctx, c, dist);
}

/** Events since the last send, volatile data, then any detail-level change. */
export function sendUpdate(ctx: SendContext, c: EntityCache, dist: number): void {
  const h = c.history;
  if (h.lastSeq > c.lastEventNumber) {
    if (h.trimmedTo > c.lastEventNumber) {
      // The history no longer reaches back to what this client saw: resend what changed since, never stay stale.
      const lvl = c.detailLevel;
      const n = collect(ctx, c, lvl, c.lodStamps.length, c.lastEventNumber);
      writeDetailLevel(ctx.w, c.alias, c.entity.id, lvl, c.entity.container.values, ctx.props, n);
      ctx.stats.refreshes++;
    } else sendEvents(ctx, c, dist);
    c.lastEventNumber = h.lastSeq;
  }
  sendVolatile(ctx, c, dist);
  updateDetail(ctx, c, dist);
}

function sendEvents(ctx: SendContext, c: EntityCache, dist: number): void {
  const h = c.history, ev = h.events, w = ctx.w, id = c.entity.id, alias = c.alias, level = c.detailLevel;
  for (let i = h.indexAfter(c.lastEventNumber); i < ev.length; i++) {
    const e = ev[i];
    if (e === null) continue;
    if (e.prop >= 0) {
      if (e.level >= level) {
        writeProperty(w, alias, id, e.bytes);
        ctx.stats.propertyEvents++;
      }
    } else if (dist <= e.distance) {
      writeMethod(w, alias, id, e.bytes);
      ctx.stats.methodEvents++;
    }
  }
}

/**
 * Seed 001's updateDetailLevel with the type's hysteresis: moving nearer sends each newly visible level's
 * properties changed since the client last had that level; moving away records the stamps of the levels left.
 */
export function updateDetail(ctx: SendContext, c: EntityCache, dist: number): void {
  if (dist >= c.lodIn && dist <= c.lodOut) return;
  const old = c.detailLevel;
  const nl = c.entity.type.updateDetailLevel(old, dist);
  if (nl === old) return;
  let n = 0;
  if (nl < old) n = collect(ctx, c, nl, old, c.lodStamps);
  else for (let l = old; l < nl; l++) c.lodStamps[l] = c.lastEventNumber;
  c.setDetailLevel(nl);
  writeDetailLevel(ctx.w, c.alias, c.entity.id, nl, c.entity.container.values, ctx.props, n);
  ctx.stats.detailChanges++;
}

/**
 * Seed 000's writeVolatileDataToBundle: what changed since the last send, position relative to the reference
 * position as PackedXZ on the ground or PackedXYZ otherwise (full position when it does not fit), direction as
 * yaw / yaw+pitch / all three by the type's volatile LoD distances.
 */
export function sendVolatile(ctx: SendContext, c: EntityCache, dist: number): void {
  const e = c.entity;
  let dirType = dist <= c.rollDist ? DIR_YPR : dist <= c.pitchDist ? DIR_YP : dist <= c.yawDist ? DIR_Y : DIR_NONE;
  if (
    dirType !== DIR_NONE && e.yaw === c.vyaw && (dirType === DIR_Y || e.pitch === c.vpitch) &&
    (dirType !== DIR_YPR || e.roll === c.vroll)
  ) dirType = DIR_NONE;
  const moved = dist <= c.posDist && (e.x !== c.vx || e.y !== c.vy || e.z !== c.vz);
  if (!moved && dirType === DIR_NONE) return;
  let posType = moved ? (e.isOnGround ? POS_XZ : POS_XYZ) : POS_NONE;
  const w = ctx.w, alias = c.alias, id = e.id;
  if (
    !writeVolatile(
      w,
      alias,
      id,
      posType,
      e.x - ctx.rx,
      e.y - ctx.ry,
      e.z - ctx.rz,
      dirType,
      e.yaw,
      e.pitch,
      e.roll,
      ctx.scale,
    )
  ) {
    posType = POS_FULL;
    writeVolatile(w, alias, id, POS_FULL, e.x, e.y, e.z, dirType, e.yaw, e.pitch, e.roll, 1);
    ctx.stats.fullPositions++;
  }
  if (moved) {
    c.vx = e.x;
    c.vy = e.y;
    c.vz = e.z;
  }
  if (dirType !== DIR_NONE) {
    c.vyaw = e.yaw;
    c.vpitch = e.pitch;
    c.vroll = e.roll;
  }
  ctx.stats.volatileUpdates++;
}
