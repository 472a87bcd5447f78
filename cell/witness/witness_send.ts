/**
 * What a witness writes for one entity cache when the priority queue reaches it: enter, create, leave, and for a
 * created entity the events since its last send (or a refresh when the history no longer reaches back), its
 * volatile data and its detail-level changes (BigWorld's sendQueueElement, writeClientUpdateDataToBundle
 * and updateDetailLevel).
 */
import { errorText } from "../../core/errors.ts";
import { ByteReader, type ByteWriter, type PropertyDef } from "../../core/def/mod.ts";
import {
  AOI_MSG,
  DIR_NONE,
  DIR_Y,
  DIR_YP,
  DIR_YPR,
  NO_ALIAS,
  POS_FULL,
  POS_NONE,
  POS_XYZ,
  POS_XZ,
  readRequestUpdate,
  writeCreate,
  writeDetailLevel,
  writeEnter,
  writeLeave,
  writeMethod,
  writeProperty,
  writeVolatile,
  writeVolatilePacked,
} from "../../core/proto/mod.ts";
import { packAngle, packXZ, packY } from "../../core/geo/mod.ts";
import {
  ALIAS,
  type CacheTable,
  CREATED,
  F,
  HSEQ,
  LAST_EVENT,
  LEVEL,
  LIFE,
  LOD_IN,
  LOD_OUT,
  PITCH_DIST,
  POS_DIST,
  ROLL_DIST,
  STATE,
  VPITCH,
  VROLL,
  VX,
  VY,
  VYAW,
  VZ,
  YAW_DIST,
} from "./entity_cache.ts";
import { R_ON_GROUND, R_PITCH, R_ROLL, R_SEQ, R_STATE, R_X, R_Y, R_YAW, R_Z, rows } from "./entity_rows.ts";

/**
 * The most bytes sendVolatile writes: header, alias or id (a varint of up to 8 bytes), a full position, three
 * angles. A send that can only write volatile data needs no undo record when this much room is left.
 */
export const VOLATILE_MAX_BYTES = 1 + 8 + 12 + 3;

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
  /** Answers to enters that came after their cache was gone or answered: a race of leaves and answers, not bad input. */
  staleRequests: number;
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
    staleRequests: 0,
    timeouts: 0,
  };
}

/** The witness state the send functions use (the witness itself implements it). */
export interface SendContext {
  readonly w: ByteWriter;
  readonly stats: WitnessStats;
  /** The caches. */
  readonly t: CacheTable;
  /** Reference position the client knows, and the packed-position scale. */
  rx: number;
  ry: number;
  rz: number;
  scale: number;
  /** Scratch list of properties to send (reused). */
  readonly props: PropertyDef[];
}

/** Whether slot `s`'s entity type has any volatile data (and so deserves an id alias). */
export function hasVolatile(t: CacheTable, s: number): boolean {
  return t.f[s * F + POS_DIST] >= 0 || t.f[s * F + YAW_DIST] >= 0;
}

/** BigWorld's enterAoI: id, alias, and the life of the entity's event numbering (the client's cache checks it). */
export function sendEnter(ctx: SendContext, s: number): void {
  const f = ctx.t.f, o = s * F;
  writeEnter(ctx.w, ctx.t.entity[s]!.id, f[o + ALIAS], f[o + LIFE]);
  ctx.stats.enters++;
}

/** BigWorld's leaveAoI: the per-level stamps (only if the client had the entity created). */
export function sendLeave(ctx: SendContext, s: number): void {
  const t = ctx.t, st = t.stamps[s], o = s * F, id = t.entity[s]!.id;
  if (t.f[o + STATE] === CREATED) {
    // Levels at or beyond the current one are up to date with the last event sent.
    for (let i = t.f[o + LEVEL]; i < st.length; i++) st[i] = t.f[o + LAST_EVENT];
    writeLeave(ctx.w, id, st, st.length);
  } else writeLeave(ctx.w, id, st, 0);
  ctx.stats.leaves++;
}

/** Collects into ctx.props the other-client properties with level in [from, to) changed after stamps[level]. */
function collect(ctx: SendContext, s: number, from: number, to: number, after: number[] | number): number {
  const props = ctx.t.entity[s]!.type.propertiesFor("otherClients");
  const stamps = ctx.t.history[s]!.propStamps, out = ctx.props;
  let n = 0;
  for (let i = 0; i < props.length; i++) {
    const p = props[i], l = p.detailLevel;
    if (l < from || l >= to) continue;
    if (stamps[p.index] > (typeof after === "number" ? after : after[l])) out[n++] = p;
  }
  return n;
}

/**
 * BigWorld's sendCreate: position, direction and the outermost level's properties changed since the client's stamp
 * for it (all of them without a cached copy); nearer levels follow through updateDetail.
 */
export function sendCreate(ctx: SendContext, s: number, dist: number): void {
  const t = ctx.t, f = t.f, o = s * F, e = t.entity[s]!, outer = t.stamps[s].length - 1;
  f[o + STATE] = CREATED;
  t.setDetailLevel(s, outer);
  f[o + LAST_EVENT] = t.history[s]!.lastSeq;
  const n = collect(ctx, s, outer, outer + 1, t.stamps[s]);
  writeCreate(ctx.w, e.id, e.type.id, e, outer, e.container.values, ctx.props, n);
  f[o + VX] = e.x;
  f[o + VY] = e.y;
  f[o + VZ] = e.z;
  f[o + VYAW] = e.yaw;
  f[o + VPITCH] = e.pitch;
  f[o + VROLL] = e.roll;
  ctx.stats.creates++;
  updateDetail(ctx, s, dist);
}

/** Events since the last send, volatile data, then any detail-level change. */
export function sendUpdate(ctx: SendContext, s: number, dist: number): void {
  const t = ctx.t, f = t.f, o = s * F, last = f[o + LAST_EVENT];
  if (rows.a[f[o + HSEQ] + R_SEQ] > last) {
    const h = t.history[s]!;
    if (h.trimmedTo > last) {
      // The history no longer reaches back to what this client saw: resend what changed since, never stay stale.
      const lvl = f[o + LEVEL], e = t.entity[s]!;
      const n = collect(ctx, s, lvl, t.stamps[s].length, last);
      writeDetailLevel(ctx.w, f[o + ALIAS], e.id, lvl, e.container.values, ctx.props, n);
      ctx.stats.refreshes++;
    } else sendEvents(ctx, s, dist);
    f[o + LAST_EVENT] = h.lastSeq;
  }
  sendVolatile(ctx, s, volatileDetail(f, o, dist));
  if (dist <= f[o + LOD_IN] || dist > f[o + LOD_OUT]) updateDetail(ctx, s, dist);
}

function sendEvents(ctx: SendContext, s: number, dist: number): void {
  const t = ctx.t, o = s * F, h = t.history[s]!, ev = h.events, w = ctx.w, id = t.entity[s]!.id;
  const alias = t.f[o + ALIAS], level = t.f[o + LEVEL];
  for (let i = h.indexAfter(t.f[o + LAST_EVENT]); i < ev.length; i++) {
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
 * BigWorld's updateDetailLevel with the type's hysteresis (a level is entered within its distance and left beyond its
 * distance plus hysteresis): moving nearer sends each newly visible level's properties changed since the client last
 * had that level; moving away records the stamps of the levels left.
 */
export function updateDetail(ctx: SendContext, s: number, dist: number): void {
  const t = ctx.t, f = t.f, o = s * F;
  if (dist > f[o + LOD_IN] && dist <= f[o + LOD_OUT]) return;
  const old = f[o + LEVEL], e = t.entity[s]!, st = t.stamps[s];
  const nl = e.type.updateDetailLevel(old, dist);
  if (nl === old) return;
  let n = 0;
  if (nl < old) n = collect(ctx, s, nl, old, st);
  else for (let l = old; l < nl; l++) st[l] = f[o + LAST_EVENT];
  t.setDetailLevel(s, nl);
  writeDetailLevel(ctx.w, f[o + ALIAS], e.id, nl, e.container.values, ctx.props, n);
  ctx.stats.detailChanges++;
}

/** volatileDetail's bit: the position is within its volatile LoD distance. */
export const VOLATILE_POS = 4;

/**
 * What of slot `s`'s volatile data its type's volatile LoD sends at distance `dist`: the direction type (DIR_*)
 * plus VOLATILE_POS when the position is sent. A small integer, so that sendVolatile takes no floating-point
 * argument: a number passed to a call that is not inlined is boxed, one allocation per send.
 */
export function volatileDetail(f: Float64Array, o: number, dist: number): number {
  const dir = dist <= f[o + ROLL_DIST]
    ? DIR_YPR
    : dist <= f[o + PITCH_DIST]
    ? DIR_YP
    : dist <= f[o + YAW_DIST]
    ? DIR_Y
    : DIR_NONE;
  return dist <= f[o + POS_DIST] ? dir + VOLATILE_POS : dir;
}

/**
 * BigWorld's writeVolatileDataToBundle: what changed since the last send, position relative to the reference
 * position as PackedXZ on the ground or PackedXYZ otherwise (full position when it does not fit), direction as
 * yaw / yaw+pitch / all three by the type's volatile LoD distances (`detail`, from volatileDetail).
 */
export function sendVolatile(ctx: SendContext, s: number, detail: number): void {
  // From the entity's row (entity_rows.ts): the entity object is not touched.
  const t = ctx.t, f = t.f, o = s * F, R = rows.a, r = f[o + HSEQ];
  const yaw = R[r + R_YAW], pitch = R[r + R_PITCH], roll = R[r + R_ROLL];
  let dirType = detail & 3;
  if (
    dirType !== DIR_NONE && yaw === f[o + VYAW] && (dirType === DIR_Y || pitch === f[o + VPITCH]) &&
    (dirType !== DIR_YPR || roll === f[o + VROLL])
  ) dirType = DIR_NONE;
  const x = R[r + R_X], y = R[r + R_Y], z = R[r + R_Z];
  const moved = (detail & VOLATILE_POS) !== 0 && (x !== f[o + VX] || y !== f[o + VY] || z !== f[o + VZ]);
  if (!moved && dirType === DIR_NONE) return;
  const onGround = (R[r + R_STATE] & R_ON_GROUND) !== 0;
  const posType = moved ? (onGround ? POS_XZ : POS_XYZ) : POS_NONE;
  const w = ctx.w, alias = f[o + ALIAS], id = alias === NO_ALIAS ? t.entity[s]!.id : 0;
  // Packed here and written with integers only: numbers passed to a call that is not inlined are boxed, one
  // allocation each, and this runs for most entities of every AoI every tick.
  let xz = 0, py = 0;
  if (moved) {
    const scale = ctx.scale;
    xz = packXZ(x - ctx.rx, z - ctx.rz, scale);
    if (xz >= 0 && posType === POS_XYZ) py = packY(y - ctx.ry, scale);
  }
  if (xz < 0 || py < 0) {
    // Beyond the packed range around the reference position: the full position.
    writeVolatile(w, alias, id, POS_FULL, x, y, z, dirType, yaw, pitch, roll, 1);
    ctx.stats.fullPositions++;
  } else {
    const yi = dirType !== DIR_NONE ? packAngle(yaw) : 0;
    const pi = dirType === DIR_YP || dirType === DIR_YPR ? packAngle(pitch) : 0;
    writeVolatilePacked(w, alias, id, posType, xz, py, dirType, yi, pi, dirType === DIR_YPR ? packAngle(roll) : 0);
  }
  if (moved) {
    f[o + VX] = x;
    f[o + VY] = y;
    f[o + VZ] = z;
  }
  if (dirType !== DIR_NONE) {
    f[o + VYAW] = yaw;
    f[o + VPITCH] = pitch;
    f[o + VROLL] = roll;
  }
  ctx.stats.volatileUpdates++;
}

/**
 * Reads a client→server frame of request-update messages, calling `onRequest` for each; returns what was wrong
 * with it (the messages before that were handled), or null.
 */
export function readRequestUpdates(
  frame: Uint8Array,
  onRequest: (id: number, life: number, stamps: number[]) => void,
): string | null {
  const r = new ByteReader(frame);
  try {
    while (r.remaining > 0) {
      const id = r.u8();
      if (id !== AOI_MSG.requestUpdate) return `unexpected AOI message id ${id} from the client`;
      const m = readRequestUpdate(r);
      onRequest(m.id, m.life, m.stamps);
    }
  } catch (e) {
    return `malformed AOI message: ${errorText(e)}`;
  }
  return null;
}
