/**
 * The data a cellapp's messages carry (CellMsg, cell_interface.ts; some also go in the cellappmgr's and the backups'
 * messages): a space's geometry, the states a ghost, an offload and a teleport are made from, entity snapshots,
 * spawn requests, and what a cell answers about its entities; with the check of each as it comes off the wire.
 */
import {
  address,
  any,
  arrayOf,
  bool,
  bytes,
  cellId,
  type Check,
  coord,
  entityId,
  int,
  numIn,
  obj,
  optional,
  processId,
  spaceId,
  str,
  vec3,
} from "./check.ts";
import { type BspNode, checkBsp } from "../geo/mod.ts";
import { MAX_GEOMETRY_PATH, MAX_RADIUS } from "../space_settings.ts";

/** A space's geometry as every cellapp hosting one of its cells gets it. */
export interface SpaceGeometry {
  spaceId: number;
  /** [minX, minZ, maxX, maxZ]. */
  bounds: [number, number, number, number];
  tree: BspNode;
  /** The default space (id 1) never shuts down. */
  isDefault: boolean;
  /** The listening address of each cellapp holding a cell of the space, by cellapp id. */
  cellapps?: [number, string][];
  /** The space's own AoI and ghost radius (core/space_settings.ts); absent ones are the cellapp's. */
  aoiRadius?: number;
  ghostRadius?: number;
  /**
   * The file its navigation mesh is made from (an OBJ mesh, a height field or an exported navmesh; cell/nav/), fixed
   * when the space is made; none: the space has no navigation.
   */
  navGeometry?: string;
  /**
   * A base script's instance: the cellappmgr shuts it down once every cell is empty, whatever its cell count (kept
   * with the geometry so that a restarted cellappmgr learns it back from the cellapps).
   */
  shutDownWhenEmpty?: boolean;
}

/** What a ghost is created with: the real's ghosted state and where the real is. */
export interface GhostState {
  spaceId: number;
  /** The cell (id within the space) the ghost is created in. */
  cellId: number;
  id: number;
  type: string;
  position: [number, number, number];
  direction: [number, number, number];
  isOnGround: boolean;
  /** The ghosted properties (encodeGhostState). */
  props: Uint8Array;
  /** The last sync batch number sent to ghosts; the next batch is one more. */
  syncSeq: number;
  /** How many times the real has moved cell: a ghost ignores a state older than what it has. */
  epoch: number;
  /** The cellapp of the real, its address, and the real's cell. */
  realCellapp: number;
  realAddress: string;
  realCell: number;
  /** The baseapp of the entity's base, if it has one: only it may act for the entity's client. */
  baseAddress: string | null;
  /** The real's recent event history, so an offload onto this ghost needs no refresh. */
  history: HistoryState;
}

/** An entity's event history as plain data (cell/event_history.ts): a ghost is made with it, a teleport carries it. */
export interface HistoryState {
  /** The life (epoch) its numbers belong to; absent from an older sender, which starts a new life. */
  life?: number;
  lastSeq: number;
  trimmedTo: number;
  propStamps: number[];
  /** [seq, prop, level, distance, bytes] of each event still held. */
  events: [number, number, number, number, Uint8Array][];
}

/** An entity's whole cell state in one serialised form (offloads, teleports, tests). */
export interface EntitySnapshot {
  id: number;
  type: string;
  position: [number, number, number];
  direction: [number, number, number];
  isOnGround: boolean;
  /** Every cell property (encodeCellBackup). */
  props: Uint8Array;
  /** Timers, movement and range triggers, in the cellapp's serialised form. */
  controllers: unknown[];
  nextControllerId: number;
  /**
   * The sequence number of the last client call its base sent that ran on it: its base
   * replays the later ones into the entity restored from this state. Absent: 0.
   */
  clientCallSeq?: number;
}

/** What a real's cell sends the cell that takes it over. */
export interface OffloadState {
  spaceId: number;
  /** The cell (id within the space) that takes the real. */
  cellId: number;
  /** The whole cell state: properties, position, direction, controllers. */
  entity: EntitySnapshot;
  /** The number of the last ghost batch sent; the new real goes on from it. */
  syncSeq: number;
  /** The real's ghosts [cellapp, address, cell id], the receiving cell's own included. */
  ghosts: [number, string, number][];
  /** The old cell's cellapp, address and cell id: it becomes a ghost. */
  from: [number, string, number];
  baseAddress: string | null;
  hasClient: boolean;
  /** How many times the real moved cell before this move; its client's frames carry the count (epoch). */
  epoch?: number;
  /** The real's witness, when its client is attached (cell/witness_state.ts). */
  witness?: WitnessState;
}

/** What a teleporting real's cell sends the destination cell: its offload state, and its event history. */
export interface TeleportState extends OffloadState {
  /** Whether its client's witness was on (the destination starts a new one). */
  hadWitness: boolean;
  /** Its event history, so that its numbering goes on there (absent from an older sender: a new life starts). */
  history?: HistoryState;
  /**
   * Entities whose enter the old view sent and whose client's answer had not come: answers on their way that the
   * new view takes for stale (cell/witness/witness.ts, answersOwed), one id per answer.
   */
  answersOwed?: number[];
}

/** One cache of a witness, as plain data. */
export interface CacheState {
  /** The entity it is about. */
  id: number;
  /** The slot's record (cell/entity_cache.ts offsets, F numbers); DEADLINE relative to the cell's time. */
  record: number[];
  /** Per detail level, the event up to which the client knows that level's properties. */
  stamps: number[];
  /** Its priority in the queue; -1 when out of it (waiting for the client's request). */
  queued: number;
}

/** A witness as plain data (msgpack-friendly). */
export interface WitnessState {
  /** The numeric settings in force (AoI radius, hysteresis, byte budget, weights...). */
  opts: Record<string, number>;
  /** The reference position the client holds, the packed-position scale, and whether the client has it (1/0). */
  reference: [number, number, number, number, number];
  caches: CacheState[];
  /** Free id aliases, in the order they are handed out (last first). */
  freeAliases: number[];
  /** Own-client messages written and not sent yet. */
  own: Uint8Array;
  /** The counters so far. */
  stats: Record<string, number>;
  /** Which of `opts` the entity's script set (they do not follow the space's); absent from an older sender. */
  scripted?: string[];
}

/**
 * One tick's changes of a real for its ghosts: [kind, ...]. Kinds: 0 volatile
 * [0, x, y, z, yaw, pitch, roll, onGround]; 1 property [1, internal-index change
 * bytes]; 2 history event [2, seq, prop, level, distance, bytes].
 */
export type GhostOp = unknown[];

/** Entities to create in a space: `count` of `type`, at random points of the cell unless `position` is given. */
export interface SpawnRequest {
  spaceId: number;
  /** The cell to create them in; the first cell of the space on the cellapp when not given. */
  cellId?: number | null;
  type: string;
  count: number;
  /** Initial property values by name. */
  props?: Record<string, unknown> | null;
  position?: [number, number, number] | null;
  /** The ids to give them, [first, last], reserved by the cellappmgr beforehand. */
  ids: [number, number];
}

/** One entity as a cell lists it. */
export interface EntitySummary {
  id: number;
  type: string;
  position: [number, number, number];
  real: boolean;
  /** The cell (id within the space) holding it, real or ghost. */
  cell: number;
}

/** One cell property of a real entity, as the admin API shows it. */
export interface PropertyValue {
  name: string;
  flags: string;
  type: string;
  /** The value as JSON (blobs in base64, 64-bit integers as strings). */
  value: unknown;
}

/** Where an entity is, as the cellapp holding it knows it. */
export interface EntityLocation {
  id: number;
  type: string;
  spaceId: number;
  position: [number, number, number];
  real: boolean;
  /** Cellapp ids holding ghosts of it (known by its real), each once. */
  ghosts: number[];
  /** The listening address of its base's baseapp, when it has a base. */
  base?: string | null;
}

/** How a base asks for its cell entity. */
export interface CellEntitySpec {
  spaceId: number;
  /** The base entity's id; the cell entity has the same one. */
  entityId: number;
  type: string;
  position: [number, number, number];
  direction: [number, number, number];
  /** The cell properties the base holds initial values for (encodeCellBackup of a "cell" container). */
  props: Uint8Array;
  /** The baseapp of the base entity, for messages back to it. */
  baseAddress: string;
  hasClient: boolean;
}

const bounds = (v: unknown) =>
  Array.isArray(v) && v.length === 4 && v.every((n) => coord(n) === null) && v[0] < v[2] && v[1] < v[3]
    ? null
    : "bounds must be [minX, minZ, maxX, maxZ] of coordinates with min < max";
/** A fixed-length tuple whose items pass their checks. */
const row = (...items: Check[]): Check => (v) => {
  if (!Array.isArray(v) || v.length !== items.length) return `expected ${items.length} items`;
  for (let i = 0; i < items.length; i++) {
    const why = items[i](v[i]);
    if (why) return `item ${i}: ${why}`;
  }
  return null;
};
/** Checks a SpaceGeometry from the wire. */
export const spaceGeometry: Check = obj({
  spaceId,
  bounds,
  tree: checkBsp,
  isDefault: bool,
  cellapps: optional(arrayOf(row(processId, address), 1024)),
  aoiRadius: optional(numIn(1e-3, MAX_RADIUS)),
  ghostRadius: optional(numIn(1e-3, MAX_RADIUS)),
  navGeometry: optional(str(MAX_GEOMETRY_PATH)),
  shutDownWhenEmpty: optional(bool),
});
const typeName = str(100);
const seq = int(0, 2 ** 53);
const nullableAddress = optional(address);
/** Checks a HistoryState from the wire. */
const historyState: Check = obj({
  life: optional(int(1, 2 ** 32 - 1)),
  lastSeq: seq,
  trimmedTo: seq,
  propStamps: arrayOf(seq, 65_536),
  events: arrayOf(row(seq, int(0, 65_535), int(0, 255), numIn(0, Infinity), bytes(1024 * 1024)), 100_000),
});
/** Checks a GhostState from the wire: ids, position, addresses; the encoded parts are checked where decoded. */
export const ghostState: Check = obj({
  spaceId,
  cellId,
  id: entityId,
  type: typeName,
  position: vec3,
  direction: vec3,
  isOnGround: bool,
  props: bytes(1024 * 1024),
  syncSeq: seq,
  epoch: seq,
  realCellapp: processId,
  realAddress: address,
  realCell: cellId,
  baseAddress: nullableAddress,
  history: historyState,
});
const snapshot: Check = obj({
  id: entityId,
  type: typeName,
  position: vec3,
  direction: vec3,
  isOnGround: bool,
  props: bytes(4 * 1024 * 1024),
  controllers: arrayOf(any, 100_000),
  nextControllerId: int(0, 2 ** 53),
  clientCallSeq: optional(int(0, 2 ** 53)),
});
/** Checks an EntitySnapshot from the wire (cell backups too). */
export const entitySnapshotCheck: Check = snapshot;
const offloadFields = {
  spaceId,
  cellId,
  entity: snapshot,
  syncSeq: seq,
  ghosts: arrayOf(row(processId, address, cellId), 10_000),
  from: row(processId, address, cellId),
  baseAddress: nullableAddress,
  hasClient: bool,
  epoch: optional(seq),
  // The witness's internals are checked where they are read (cell/witness_state.ts).
  witness: any,
};
/** Checks an OffloadState from the wire. */
export const offloadState: Check = obj(offloadFields);
/** Checks a teleport's state: an OffloadState, whether it had a witness, and its event history. */
export const teleportState: Check = obj({
  ...offloadFields,
  hadWitness: bool,
  history: optional(historyState),
  answersOwed: optional(arrayOf(entityId, 100_000)),
});
/** Checks a SpawnRequest from the wire. */
export const spawnRequest: Check = obj({
  spaceId,
  cellId: optional(cellId),
  type: typeName,
  count: int(1, 1_000_000),
  props: optional(any),
  position: optional(vec3),
  ids: row(entityId, entityId),
});

/** Checks a CellEntitySpec whose spaceId is at least `minSpace` (0 allows "a new space"). */
export function cellEntitySpec(minSpace: number): (v: unknown) => string | null {
  return obj({
    spaceId: int(minSpace, 2 ** 32 - 1),
    entityId,
    type: typeName,
    position: vec3,
    direction: vec3,
    props: bytes(1024 * 1024),
    baseAddress: address,
    hasClient: bool,
  });
}
