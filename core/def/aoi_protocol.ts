/**
 * The AOI part of the client protocol (message ids 32-95): what a witness sends a client about the entities around
 * it, and the client's one reply (the cache stamps on entering). A frame holds `[u8 id][payload]` messages,
 * little-endian, varints as ByteWriter writes them. Direction per id:
 *
 * | id    | dir | message          | payload                                                                    |
 * | ----- | --- | ---------------- | -------------------------------------------------------------------------- |
 * | 32    | S→C | enter            | varint id, u8 alias (255: none), varint life                               |
 * | 33    | S→C | create           | varint id, varint type, f32 x y z, f32 yaw pitch roll, u8 level, props     |
 * | 34    | S→C | leave            | varint id, varint n, n × varint stamp (one per detail level, nearest first) |
 * | 35    | S→C | property         | ref, change (core/def writeChange, client index space)                     |
 * | 36    | S→C | detail level     | ref, u8 level, props (those that became visible or went stale)             |
 * | 37    | S→C | reference pos    | f32 x y z, f32 scale (of packed positions)                                 |
 * | 38    | S→C | client method    | ref, varint method index, args by their declared types                     |
 * | 39    | S→C | own property     | change, for the player's own entity                                        |
 * | 40    | S→C | own method       | varint method index, args, for the player's own entity                     |
 * | 48    | C→S | request update   | varint id, varint life, varint n, n × varint stamp (n = 0: nothing cached) |
 * | 64-95 | S→C | volatile         | id = 64 + 16·hasAlias + 4·posType + dirType: alias u8 or varint id, pos, dir |
 *
 * ref = u8 alias, or 255 then varint id. props = varint n, n × (varint client index, value). Volatile pos types:
 * 0 PackedXYZ, 1 PackedXZ (both relative to the reference position), 2 none, 3 full f32 x y z; dir types: 0 yaw
 * pitch roll, 1 yaw pitch, 2 yaw (int8 each), 3 none.
 *
 * life: the epoch of the entity's event numbering (1 to 2^32-1), which changes whenever the numbering restarts (the
 * entity was made again: a relog, a restore). Stamps hold only within one life: a client keeps the life with the
 * stamps it caches at a leave and offers them again only for an enter of the same life (life 0 and no stamps
 * otherwise); the server sends the full state for stamps of another life.
 */
import { errorText } from "../errors.ts";
import { ByteReader, ByteWriter } from "../bytes/mod.ts";
import { readChange } from "./codec.ts";
import { ChangeRecord } from "./container.ts";
import { EntityRegistry, EntityType, MethodDef, PropertyDef } from "./model.ts";
import { packAngle, PACKED_XYZ_BYTES, packXZ, packY, unpackAngle, unpackX, unpackY, unpackZ } from "../geo/packed.ts";

/** Message ids of the AOI protocol. */
export const AOI_MSG = {
  ENTER: 32,
  CREATE: 33,
  LEAVE: 34,
  PROPERTY: 35,
  DETAIL_LEVEL: 36,
  REFERENCE: 37,
  METHOD: 38,
  OWN_PROPERTY: 39,
  OWN_METHOD: 40,
  REQUEST_UPDATE: 48,
  VOLATILE: 64,
} as const;

/** The alias value meaning "no alias: the full id follows". */
export const NO_ALIAS = 255;
/** Volatile position types. */
export const POS_XYZ = 0, POS_XZ = 1, POS_NONE = 2, POS_FULL = 3;
/** Volatile direction types. */
export const DIR_YPR = 0, DIR_YP = 1, DIR_Y = 2, DIR_NONE = 3;

/** Whether a message id belongs to the AOI protocol (32-95). */
export function isAoiMessageId(id: number): boolean {
  return id >= 32 && id <= 95;
}

/** A property value as create and detail-level messages carry it (index = property index). */
export interface PropValue {
  readonly index: number;
  readonly value: unknown;
}

/** A decoded AOI message. */
export type AoiMessage =
  | { kind: "enter"; id: number; alias: number; life: number }
  | {
    kind: "create";
    id: number;
    type: EntityType;
    x: number;
    y: number;
    z: number;
    yaw: number;
    pitch: number;
    roll: number;
    detailLevel: number;
    props: PropValue[];
  }
  | { kind: "leave"; id: number; stamps: number[] }
  | { kind: "property"; id: number; change: ChangeRecord; byAlias?: boolean }
  | { kind: "detailLevel"; id: number; detailLevel: number; props: PropValue[]; byAlias?: boolean }
  | { kind: "reference"; x: number; y: number; z: number; scale: number }
  | { kind: "method"; id: number; method: MethodDef; args: unknown[]; byAlias?: boolean }
  | { kind: "ownProperty"; change: ChangeRecord }
  | { kind: "ownMethod"; method: MethodDef; args: unknown[] }
  | { kind: "requestUpdate"; id: number; life: number; stamps: number[] }
  | {
    kind: "volatile";
    id: number;
    /** Whether the entity was named by its alias (else by its full id); set when decoded. */
    byAlias?: boolean;
    posType: number;
    /** Relative to the reference position for POS_XZ / POS_XYZ (y is 0 for POS_XZ); absolute for POS_FULL. */
    x: number;
    y: number;
    z: number;
    dirType: number;
    /** NaN where the direction type leaves an angle out. */
    yaw: number;
    pitch: number;
    roll: number;
  };

/** What decoding needs to know on the client side. */
export interface AoiDecodeContext {
  readonly registry: EntityRegistry;
  /** The entity an alias stands for; throws or returns -1 when unknown. */
  aliasId(alias: number): number;
  /** The type of an entity the client knows of, or undefined. */
  typeOf(id: number): EntityType | undefined;
  /** The player's own entity type, for own-client messages. */
  readonly ownType: EntityType | null;
  /** Scale of packed positions (from the last reference message). */
  readonly scale: number;
}

function writeRef(w: ByteWriter, alias: number, id: number): void {
  w.u8(alias);
  if (alias === NO_ALIAS) w.varint(id);
}

/** Writes the varint count and (client index, value) pairs of the first `n` of `props`. */
export function writeProps(w: ByteWriter, values: readonly unknown[], props: readonly PropertyDef[], n: number): void {
  w.varint(n);
  for (let i = 0; i < n; i++) {
    const p = props[i];
    w.varint(p.clientIndex);
    p.type.write(w, values[p.index]);
  }
}

/** S→C: an entity of life `life` entered the AoI (the client answers with writeRequestUpdate). */
export function writeEnter(w: ByteWriter, id: number, alias: number, life: number): void {
  w.u8(AOI_MSG.ENTER);
  w.varint(id);
  w.u8(alias);
  w.varint(life);
}

/** S→C: creates an entity at its outermost known detail level with the given properties. */
export function writeCreate(
  w: ByteWriter,
  id: number,
  typeId: number,
  x: number,
  y: number,
  z: number,
  yaw: number,
  pitch: number,
  roll: number,
  detailLevel: number,
  values: readonly unknown[],
  props: readonly PropertyDef[],
  n: number,
): void {
  w.u8(AOI_MSG.CREATE);
  w.varint(id);
  w.varint(typeId);
  w.f32(x);
  w.f32(y);
  w.f32(z);
  w.f32(yaw);
  w.f32(pitch);
  w.f32(roll);
  w.u8(detailLevel);
  writeProps(w, values, props, n);
}

/** S→C: an entity left the AoI; `stamps` (per detail level) let the client keep it cached. */
export function writeLeave(w: ByteWriter, id: number, stamps: ArrayLike<number>, n: number): void {
  w.u8(AOI_MSG.LEAVE);
  w.varint(id);
  w.varint(n);
  for (let i = 0; i < n; i++) w.varint(stamps[i]);
}

/** S→C: a property change, already encoded by writeChange in the client index space. */
export function writeProperty(w: ByteWriter, alias: number, id: number, change: Uint8Array): void {
  w.u8(AOI_MSG.PROPERTY);
  writeRef(w, alias, id);
  w.raw(change);
}

/** S→C: the entity's detail level changed; `props` are the values that became visible (or were stale). */
export function writeDetailLevel(
  w: ByteWriter,
  alias: number,
  id: number,
  level: number,
  values: readonly unknown[],
  props: readonly PropertyDef[],
  n: number,
): void {
  w.u8(AOI_MSG.DETAIL_LEVEL);
  writeRef(w, alias, id);
  w.u8(level);
  writeProps(w, values, props, n);
}

/** S→C: the point packed positions are relative to, and their scale. */
export function writeReference(w: ByteWriter, x: number, y: number, z: number, scale: number): void {
  w.u8(AOI_MSG.REFERENCE);
  w.f32(x);
  w.f32(y);
  w.f32(z);
  w.f32(scale);
}

/** Encodes a client method call (index and arguments, each checked against its type); names the method on error. */
export function writeMethodCall(w: ByteWriter, type: EntityType, method: MethodDef, args: readonly unknown[]): void {
  if (args.length !== method.args.length) {
    throw new RangeError(
      `${type.name}.${method.name} takes ${method.args.length} argument(s), got ${args.length}`,
    );
  }
  w.varint(method.index);
  for (let i = 0; i < args.length; i++) {
    const a = method.args[i];
    let v: unknown;
    try {
      v = a.type.coerce(args[i]);
    } catch (e) {
      throw new RangeError(
        `${type.name}.${method.name} argument ${a.name ?? i}: ${errorText(e)}`,
        { cause: e },
      );
    }
    a.type.write(w, v);
  }
}

/** S→C: a client method call on another entity (the call's bytes from writeMethodCall). */
export function writeMethod(w: ByteWriter, alias: number, id: number, call: Uint8Array): void {
  w.u8(AOI_MSG.METHOD);
  writeRef(w, alias, id);
  w.raw(call);
}

/** S→C: a change of the player's own entity (bytes from writeChange, client index space). */
export function writeOwnProperty(w: ByteWriter, change: Uint8Array): void {
  w.u8(AOI_MSG.OWN_PROPERTY);
  w.raw(change);
}

/** S→C: a client method call on the player's own entity (bytes from writeMethodCall). */
export function writeOwnMethod(w: ByteWriter, call: Uint8Array): void {
  w.u8(AOI_MSG.OWN_METHOD);
  w.raw(call);
}

/**
 * C→S: asks for an entity that entered, with the life and stamps of a cached copy (life 0 and no stamps: send
 * everything).
 */
export function writeRequestUpdate(w: ByteWriter, id: number, life: number, stamps: ArrayLike<number>): void {
  w.u8(AOI_MSG.REQUEST_UPDATE);
  w.varint(id);
  w.varint(life);
  w.varint(stamps.length);
  for (let i = 0; i < stamps.length; i++) w.varint(stamps[i]);
}

/**
 * S→C: a volatile update. For POS_XZ/POS_XYZ, x/y/z are relative to the reference position and must fit the packed
 * form at `scale` (the caller falls back to POS_FULL with absolute values when packXZ/packY return -1).
 * Returns false, writing nothing, when a packed position does not fit.
 */
export function writeVolatile(
  w: ByteWriter,
  alias: number,
  id: number,
  posType: number,
  x: number,
  y: number,
  z: number,
  dirType: number,
  yaw: number,
  pitch: number,
  roll: number,
  scale: number,
): boolean {
  let xz = 0, py = 0;
  if (posType === POS_XZ || posType === POS_XYZ) {
    xz = packXZ(x, z, scale);
    if (xz < 0) return false;
    if (posType === POS_XYZ) {
      py = packY(y, scale);
      if (py < 0) return false;
    }
  }
  const hasAlias = alias !== NO_ALIAS;
  // One ensure, then straight into the buffer: this runs for most entities of every AoI every tick.
  w.ensure(2 + PACKED_XYZ_BYTES + 12 + 8);
  const b = w.buf;
  let at = w.pos;
  b[at++] = AOI_MSG.VOLATILE + (hasAlias ? 16 : 0) + posType * 4 + dirType;
  if (hasAlias) b[at++] = alias;
  else {
    w.pos = at;
    w.varint(id);
    at = w.pos;
  }
  if (posType === POS_XZ || posType === POS_XYZ) {
    b[at++] = xz & 0xff;
    b[at++] = (xz >>> 8) & 0xff;
    b[at++] = xz >>> 16;
    if (posType === POS_XYZ) {
      b[at++] = py & 0xff;
      b[at++] = py >>> 8;
    }
  } else if (posType === POS_FULL) {
    w.pos = at;
    w.f32(x);
    w.f32(y);
    w.f32(z);
    at = w.pos;
  }
  if (dirType !== DIR_NONE) {
    b[at++] = packAngle(yaw) & 0xff;
    if (dirType !== DIR_Y) {
      b[at++] = packAngle(pitch) & 0xff;
      if (dirType === DIR_YPR) b[at++] = packAngle(roll) & 0xff;
    }
  }
  w.pos = at;
  return true;
}

function readRef(r: ByteReader, ctx: AoiDecodeContext): number {
  const alias = r.u8();
  return alias === NO_ALIAS ? r.varint() : ctx.aliasId(alias);
}

/** Whether the entity reference at the reader's position is an alias (read before readRef). */
function isAliasRef(r: ByteReader): boolean {
  return r.remaining > 0 && r.buf[r.pos] !== NO_ALIAS;
}

function typeOf(ctx: AoiDecodeContext, id: number): EntityType {
  const t = ctx.typeOf(id);
  if (!t) throw new RangeError(`AOI message for unknown entity ${id}`);
  return t;
}

function readProps(r: ByteReader, type: EntityType): PropValue[] {
  const n = r.varint();
  if (n > r.remaining) throw new RangeError(`${type.name}: ${n} properties exceed the data left`);
  const out: PropValue[] = [];
  for (let i = 0; i < n; i++) {
    const ci = r.varint();
    const p = type.clientProperties[ci];
    if (!p) throw new RangeError(`${type.name} has no client property index ${ci}`);
    out.push({ index: p.index, value: p.type.read(r) });
  }
  return out;
}

function readStamps(r: ByteReader): number[] {
  const n = r.varint();
  if (n > r.remaining) throw new RangeError(`${n} stamps exceed the data left`);
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) out[i] = r.varint();
  return out;
}

function readCall(r: ByteReader, type: EntityType): { method: MethodDef; args: unknown[] } {
  const mi = r.varint();
  const method = type.clientMethods[mi];
  if (!method) throw new RangeError(`${type.name} has no client method index ${mi}`);
  const args = method.args.map((a) => a.type.read(r));
  return { method, args };
}

/** Decodes the payload of one AOI message whose id has been read; throws RangeError on malformed data. */
export function readAoiMessage(r: ByteReader, id: number, ctx: AoiDecodeContext): AoiMessage {
  switch (id) {
    case AOI_MSG.ENTER:
      return { kind: "enter", id: r.varint(), alias: r.u8(), life: r.varint() };
    case AOI_MSG.CREATE: {
      const eid = r.varint();
      const type = ctx.registry.byId(r.varint());
      const x = r.f32(), y = r.f32(), z = r.f32();
      const yaw = r.f32(), pitch = r.f32(), roll = r.f32();
      const detailLevel = r.u8();
      return { kind: "create", id: eid, type, x, y, z, yaw, pitch, roll, detailLevel, props: readProps(r, type) };
    }
    case AOI_MSG.LEAVE:
      return { kind: "leave", id: r.varint(), stamps: readStamps(r) };
    case AOI_MSG.PROPERTY: {
      const byAlias = isAliasRef(r), eid = readRef(r, ctx);
      return { kind: "property", id: eid, change: readChange(r, typeOf(ctx, eid)), byAlias };
    }
    case AOI_MSG.DETAIL_LEVEL: {
      const byAlias = isAliasRef(r), eid = readRef(r, ctx);
      const detailLevel = r.u8();
      return { kind: "detailLevel", id: eid, detailLevel, props: readProps(r, typeOf(ctx, eid)), byAlias };
    }
    case AOI_MSG.REFERENCE:
      return { kind: "reference", x: r.f32(), y: r.f32(), z: r.f32(), scale: r.f32() };
    case AOI_MSG.METHOD: {
      const byAlias = isAliasRef(r), eid = readRef(r, ctx);
      return { kind: "method", id: eid, ...readCall(r, typeOf(ctx, eid)), byAlias };
    }
    case AOI_MSG.OWN_PROPERTY:
      if (!ctx.ownType) throw new RangeError("own property update before the player entity exists");
      return { kind: "ownProperty", change: readChange(r, ctx.ownType) };
    case AOI_MSG.OWN_METHOD:
      if (!ctx.ownType) throw new RangeError("own method call before the player entity exists");
      return { kind: "ownMethod", ...readCall(r, ctx.ownType) };
    case AOI_MSG.REQUEST_UPDATE:
      return { kind: "requestUpdate", id: r.varint(), life: r.varint(), stamps: readStamps(r) };
  }
  if (id >= AOI_MSG.VOLATILE && id <= 95) return readVolatile(r, id - AOI_MSG.VOLATILE, ctx);
  throw new RangeError(`message id ${id} is not an AOI message`);
}

function readVolatile(r: ByteReader, v: number, ctx: AoiDecodeContext): AoiMessage {
  const posType = (v >> 2) & 3, dirType = v & 3;
  const eid = v & 16 ? ctx.aliasId(r.u8()) : r.varint();
  let x = 0, y = 0, z = 0;
  if (posType === POS_XZ || posType === POS_XYZ) {
    const xz = r.u8() | (r.u8() << 8) | (r.u8() << 16);
    x = unpackX(xz, ctx.scale);
    z = unpackZ(xz, ctx.scale);
    if (posType === POS_XYZ) y = unpackY(r.u16(), ctx.scale);
  } else if (posType === POS_FULL) {
    x = r.f32();
    y = r.f32();
    z = r.f32();
  }
  let yaw = NaN, pitch = NaN, roll = NaN;
  if (dirType !== DIR_NONE) {
    yaw = unpackAngle(r.i8());
    if (dirType !== DIR_Y) {
      pitch = unpackAngle(r.i8());
      if (dirType === DIR_YPR) roll = unpackAngle(r.i8());
    }
  }
  return { kind: "volatile", id: eid, posType, x, y, z, dirType, yaw, pitch, roll, byAlias: (v & 16) !== 0 };
}
