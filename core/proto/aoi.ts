/**
 * The AoI part of the client protocol (message codes 32-95): what a witness sends a client about the entities around
 * it, and the client's one reply (the cache stamps on entering). Each message is one entry of AOI_MESSAGES, its fields
 * in wire order (docs/protocol.md, "AoI messages"); the volatile update alone packs its flags into its code (64-95)
 * and has a codec of its own below.
 *
 * life: the epoch of the entity's event numbering (1 to 2^32-1), which changes whenever the numbering restarts (the
 * entity was made again: a relog, a restore). Stamps hold only within one life: a client keeps the life with the
 * stamps it caches at a leave and offers them again only for an enter of the same life (life 0 and no stamps
 * otherwise); the server sends the full state for stamps of another life.
 *
 * The witness writes the messages it sends every tick with the write* functions of aoi_write.ts, straight from its
 * entities and rows, allocating nothing; tests/proto checks that each writes what the declaration does.
 */
import type { ByteReader, ByteWriter } from "../bytes/mod.ts";
import { type ChangeRecord, type EntityRegistry, type EntityType, type MethodDef, readChange } from "../def/mod.ts";
import { unpackAngle, unpackX, unpackY, unpackZ } from "../geo/mod.ts";
import {
  byCode,
  type Codec,
  codes,
  type Decoded,
  message,
  readMessage,
  writeMessage,
  type Written,
} from "./declare.ts";
import { errorText } from "../errors.ts";
import { ErrorCode, ProtocolError } from "./errors.ts";
import { pose, u8, varint } from "./fields.ts";

/** The alias value meaning "no alias: the full id follows". */
export const NO_ALIAS = 255;
/** Volatile position types. */
export const POS_XYZ = 0, POS_XZ = 1, POS_NONE = 2, POS_FULL = 3;
/** Volatile direction types. */
export const DIR_YPR = 0, DIR_YP = 1, DIR_Y = 2, DIR_NONE = 3;
/** Most stamps a requestUpdate may carry. */
export const MAX_REQUEST_STAMPS = 32;
/** The first code of the volatile update; its 32 codes carry its flags. */
export const VOLATILE = 64;

/** A property value as create and detail-level messages carry it (index = property index). */
export interface PropValue {
  readonly index: number;
  readonly value: unknown;
}

/** What decoding needs to know on the client side. */
export interface AoiDecodeContext {
  /** The game's entity definitions, to decode properties and method arguments. */
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

type Msg = Readonly<Record<string, unknown>>;
type AoiCodec<W, R = W> = Codec<W, R, AoiDecodeContext>;

/** The type of the entity the message is about (its `id`), or, for own-client messages, the player's. */
function typeOf(ctx: AoiDecodeContext, m: Msg): EntityType {
  if (!("id" in m)) {
    if (!ctx.ownType) throw new RangeError("own-client message before the player entity exists");
    return ctx.ownType;
  }
  const id = m.id as number, t = ctx.typeOf(id);
  if (!t) throw new RangeError(`AOI message for unknown entity ${id}`);
  return t;
}

const f32: AoiCodec<number> = { wire: "f32", write: (w, v) => w.f32(v), read: (r) => r.f32() };

/** An entity reference's first byte: its alias, or NO_ALIAS when its full id follows (the `id` field: ref). */
const alias: AoiCodec<number> = u8;

/** The entity named by the `alias` before it: nothing more for an alias, else its full id as a varint. */
const ref: AoiCodec<number> = {
  wire: "varint id when alias is 255",
  write: (w, v, m) => {
    if (m.alias === NO_ALIAS) w.varint(v);
  },
  read: (r, ctx, m) => m.alias === NO_ALIAS ? r.varint() : ctx.aliasId(m.alias as number),
};

/** An entity type by its id. */
const entityType: AoiCodec<EntityType, EntityType> = {
  wire: "varint type id",
  write: (w, v) => w.varint(v.id),
  read: (r, ctx) => ctx.registry.byId(r.varint()),
};

/** Writes a stamps field: the varint count and the first `n` of `stamps`. */
export function writeStamps(w: ByteWriter, stamps: ArrayLike<number>, n: number): void {
  w.varint(n);
  for (let i = 0; i < n; i++) w.varint(stamps[i]);
}

/** varint n, n × varint stamp; more than `max` (or than the bytes left) is malformed. */
function stamps(max: number): AoiCodec<ArrayLike<number>, number[]> {
  return {
    wire: "varint n, n × varint stamp",
    write: (w, v) => writeStamps(w, v, v.length),
    read: (r) => {
      const n = r.varint();
      if (n > max) throw new ProtocolError(ErrorCode.malformed, `${n} stamps, at most ${max}`);
      if (n > r.remaining) throw new RangeError(`${n} stamps exceed the data left`);
      const out = new Array<number>(n);
      for (let i = 0; i < n; i++) out[i] = r.varint();
      return out;
    },
  };
}

/** A life (1 to 2^32-1; 0: none); more is malformed. */
const life: AoiCodec<number> = {
  wire: "varint",
  write: (w, v) => w.varint(v),
  read: (r) => {
    const v = r.varint();
    if (v > 0xffff_ffff) throw new ProtocolError(ErrorCode.malformed, `life ${v} is past 2^32`);
    return v;
  },
};

/**
 * Property values: varint n, n × (varint client index, value). Encoding takes the bytes writeProps wrote; decoding
 * gives values by property index, of the type the message's `type` field names, or else of the entity's type.
 */
const props: AoiCodec<Uint8Array, PropValue[]> = {
  wire: "varint n, n × (varint client index, value)",
  write: (w, v) => w.raw(v),
  read: (r, ctx, m) => {
    const type = (m.type as EntityType | undefined) ?? typeOf(ctx, m);
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
  },
};

/** A property change in the client index space: encoding takes writeChange's bytes, decoding gives the record. */
const change: AoiCodec<Uint8Array, ChangeRecord> = {
  wire: "change (core/def writeChange, client index space)",
  write: (w, v) => w.raw(v),
  read: (r, ctx, m) => readChange(r, typeOf(ctx, m)),
};

/** A client method of the entity's type, by its index. */
const method: AoiCodec<MethodDef, MethodDef> = {
  wire: "varint method index",
  write: (w, v) => w.varint(v.index),
  read: (r, ctx, m) => {
    const type = typeOf(ctx, m), mi = r.varint();
    const def = type.clientMethods[mi];
    if (!def) throw new RangeError(`${type.name} has no client method index ${mi}`);
    return def;
  },
};

/** The `method`'s arguments, each by its declared type, no count. */
const args: AoiCodec<readonly unknown[], unknown[]> = {
  wire: "args by their declared types",
  write: (w, v, m) => {
    const def = m.method as MethodDef;
    for (let i = 0; i < def.args.length; i++) def.args[i].type.write(w, def.args[i].type.coerce(v[i]));
  },
  read: (r, _ctx, m) => (m.method as MethodDef).args.map((a) => a.type.read(r)),
};

/** The AoI messages, each with its code and fields in wire order (volatile updates apart: VOLATILE). */
export const AOI_MESSAGES = {
  /** S→C: an entity of life `life` entered the AoI (the client answers with requestUpdate). */
  enter: message(32, "enter", { id: varint, alias: u8, life: varint }),
  /** S→C: creates an entity at its outermost known detail level with the given properties. */
  create: message(33, "create", { id: varint, type: entityType, pose, detailLevel: u8, props }),
  /** S→C: an entity left the AoI; its stamps (one per detail level, nearest first) let the client keep it cached. */
  leave: message(34, "leave", { id: varint, stamps: stamps(Number.MAX_SAFE_INTEGER) }),
  /** S→C: a property change of an entity. */
  property: message(35, "property", { alias, id: ref, change }),
  /** S→C: the entity's detail level changed; `props` are the values that became visible (or were stale). */
  detailLevel: message(36, "detailLevel", { alias, id: ref, detailLevel: u8, props }),
  /** S→C: the point packed positions are relative to, and their scale. */
  reference: message(37, "reference", { x: f32, y: f32, z: f32, scale: f32 }),
  /** S→C: a client method call on another entity. */
  method: message(38, "method", { alias, id: ref, method, args }),
  /** S→C: a change of the player's own entity. */
  ownProperty: message(39, "ownProperty", { change }),
  /** S→C: a client method call on the player's own entity. */
  ownMethod: message(40, "ownMethod", { method, args }),
  /**
   * C→S: asks for an entity that entered, with the life and stamps of a cached copy (life 0 and no stamps: send
   * everything).
   */
  requestUpdate: message(48, "requestUpdate", { id: varint, life, stamps: stamps(MAX_REQUEST_STAMPS) }),
} as const;

/** Codes of the AoI messages, by name; `volatile` is the first of the volatile update's 32. */
export const AOI_MSG = { ...codes(AOI_MESSAGES), volatile: VOLATILE } as const;

const aoiByCode = byCode(AOI_MESSAGES);

type Specs = typeof AOI_MESSAGES;
type Flat<T> = { [K in keyof T]: T[K] };

/** A decoded volatile update. */
export interface VolatileMessage {
  kind: "volatile";
  /** The entity's alias, or NO_ALIAS when it was named by its full id. */
  alias: number;
  id: number;
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
}

/** A decoded AOI message. */
export type AoiMessage =
  | { [N in keyof Specs]: Flat<{ kind: N } & Decoded<Specs[N]>> }[keyof Specs]
  | VolatileMessage;

/** An AOI message (volatile updates apart) as encoding takes it. */
export type AoiMessageIn = { [N in keyof Specs]: Flat<{ readonly kind: N } & Written<Specs[N]>> }[keyof Specs];

/** Whether a message code belongs to the AOI protocol (32-95). */
export function isAoiMessageId(id: number): boolean {
  return id >= 32 && id <= 95;
}

/** Writes one AOI message from its declaration (tests, tools; the witness uses the write* functions below). */
export function writeAoiMessage(w: ByteWriter, m: AoiMessageIn): void {
  writeMessage(w, AOI_MESSAGES[m.kind], m);
}

/**
 * Decodes the payload of one AOI message whose code has been read; throws ProtocolError naming the message and field
 * on malformed data.
 */
export function readAoiMessage(r: ByteReader, id: number, ctx: AoiDecodeContext): AoiMessage {
  const spec = aoiByCode[id];
  if (spec) {
    return readMessage(r, spec, ctx, "kind") as AoiMessage;
  }
  if (isVolatileId(id)) return readVolatileInto(r, id, ctx, newVolatile());
  throw new ProtocolError(ErrorCode.unknownMessage, `message id ${id} is not an AOI message`);
}

/** Whether message code `id` is a volatile update. */
export function isVolatileId(id: number): boolean {
  return id >= VOLATILE && id <= 95;
}

/** A volatile update to decode into (readVolatileInto): a client reuses one for all its volatile updates. */
export function newVolatile(): VolatileMessage {
  return {
    kind: "volatile",
    alias: NO_ALIAS,
    id: 0,
    posType: 0,
    x: 0,
    y: 0,
    z: 0,
    dirType: 0,
    yaw: 0,
    pitch: 0,
    roll: 0,
  };
}

/**
 * Decodes the payload of volatile update `id` (its code read already, isVolatileId) into `out`, every field of it,
 * and returns `out`: a client applying thousands a second allocates nothing for them. Throws ProtocolError on
 * malformed data.
 */
export function readVolatileInto(
  r: ByteReader,
  id: number,
  ctx: AoiDecodeContext,
  out: VolatileMessage,
): VolatileMessage {
  try {
    return readVolatile(r, id - VOLATILE, ctx, out);
  } catch (e) {
    throw new ProtocolError(ErrorCode.malformed, `malformed volatile (message ${id}): ${errorText(e)}`, { cause: e });
  }
}

/** Bytes of a volatile update's position by its type (POS_XYZ, POS_XZ, POS_NONE, POS_FULL), as readVolatile reads it. */
const POSITION_BYTES: readonly number[] = [5, 3, 0, 12];
/** Bytes of its direction by its type (DIR_YPR, DIR_YP, DIR_Y, DIR_NONE), as readVolatile reads it. */
const DIRECTION_BYTES: readonly number[] = [3, 2, 1, 0];

/**
 * Steps over the payload of volatile update `id` (its code read already, isVolatileId) without decoding it: for a
 * client that keeps no positions. Throws ProtocolError when the payload is cut short.
 */
export function skipVolatile(r: ByteReader, id: number): void {
  const v = id - VOLATILE;
  try {
    if ((v & 16) !== 0) r.u8();
    else r.varint();
    const n = POSITION_BYTES[(v >> 2) & 3] + DIRECTION_BYTES[v & 3];
    r.need(n);
    r.pos += n;
  } catch (e) {
    throw new ProtocolError(ErrorCode.malformed, `malformed volatile (message ${id}): ${errorText(e)}`, { cause: e });
  }
}

/** Reads one requestUpdate (its code read already), as the AOI_MESSAGES entry declares it. */
export function readRequestUpdate(r: ByteReader): Extract<AoiMessage, { kind: "requestUpdate" }> {
  return readMessage(r, AOI_MESSAGES.requestUpdate, null, "kind") as Extract<AoiMessage, { kind: "requestUpdate" }>;
}

function readVolatile(r: ByteReader, v: number, ctx: AoiDecodeContext, out: VolatileMessage): VolatileMessage {
  const posType = (v >> 2) & 3, dirType = v & 3;
  const byAlias = (v & 16) !== 0;
  const alias = byAlias ? r.u8() : NO_ALIAS;
  const id = byAlias ? ctx.aliasId(alias) : r.varint();
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
  out.alias = alias;
  out.id = id;
  out.posType = posType;
  out.x = x;
  out.y = y;
  out.z = z;
  out.dirType = dirType;
  out.yaw = yaw;
  out.pitch = pitch;
  out.roll = roll;
  return out;
}
