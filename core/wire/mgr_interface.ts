/** Messages the cellappmgr handles, and the data they carry. */
import { message } from "./catalog.ts";
import { type CellEntitySpec, cellEntitySpec, type SpaceGeometry, spaceGeometry } from "./cell_state.ts";
import type { GameVersionView } from "../views.ts";
import { MAX_RADIUS, type SpaceSettings, type SpaceSettingsView } from "../space_settings.ts";
import { MAX_NEW_SPACE_CELLS, MAX_NEW_SPACE_SIDE, type NewSpaceRequest } from "../new_space.ts";
import { MAX_GEOMETRY_PATH } from "../space_settings.ts";
import {
  address,
  arrayOf,
  bool,
  coord,
  entityId,
  int,
  MAX_ENTITY_ID,
  numIn,
  obj,
  oneOf,
  optional,
  processId,
  spaceId,
  str,
  tuple,
} from "./check.ts";

/** What a cellapp or baseapp tells the cellappmgr when it registers. */
export interface RegisterInfo {
  role: "cellapp" | "baseapp";
  pid: number;
  /** Listening address for other processes, HOST:PORT. */
  address: string;
  /** The id this process had before the cellappmgr restarted, to keep it. */
  previousId: number | null;
  /** WebSocket URL for game clients (baseapps that serve clients). */
  clientUrl: string | null;
  /** Milliseconds since the epoch when the process started. */
  startedAt: number;
  /**
   * The highest entity id this process holds or was ever given (0 for none; a baseapp counts the ids in its
   * database), so a restarted cellappmgr never reuses one.
   */
  entityIdHighWater: number;
  /** A cellapp's spaces (those it runs cells of), so a restarted cellappmgr learns them back with the registration. */
  spaces?: SpaceGeometry[];
  /**
   * The registration generation this process last held (RegisterReply.generation), null for none: a cellapp
   * that comes back with one the cellappmgr declared dead is fenced.
   */
  generation?: number | null;
  /** The game it runs (docs/game.md#reloading-a-game). */
  game?: GameVersionView;
}

/** The cellappmgr's answer to a registration. */
export interface RegisterReply {
  /** The process's id; 0 when `fenced`. */
  id: number;
  mgrPid: number;
  /** This registration's generation, unique in the cluster and growing, even across cellappmgr restarts; 0 when `fenced`. */
  generation?: number;
  /** How long the cellappmgr waits for a silent member before declaring it dead. */
  deadAfterMs?: number;
  /**
   * Why the process was fenced: it had been declared dead and its cells given away, so it must drop every cell
   * and entity it holds and register again as a new, empty member (this registration did not count). Null when not.
   */
  fenced?: string | null;
  /** Generations declared dead so far (ProcMsg.fenced): what still comes from them is dropped. */
  deadGenerations?: number[];
  /**
   * The process's address as the cellappmgr lists it to the others: the one it announced, or, when it bound every
   * interface, with the host its connection came from. What the process then tells others about itself.
   */
  address?: string;
}

/** What every registered process sends with each heartbeat. */
export interface HeartbeatReport {
  /** Share of the tick budget spent, smoothed; 0 for processes without ticks. */
  load: number;
}

/**
 * Largest load a process may report: its busy share of wall time, which can
 * pass 1 while it falls behind, but not by orders of magnitude.
 */
export const MAX_LOAD = 100;

const load = numIn(0, MAX_LOAD);
const count = int(0, 100_000_000);

/** Checks a heartbeat payload from a registered process. */
export const checkHeartbeatReport = obj({ load });

/**
 * The fractions of a cell's entity load that its entity-bound levels are given
 * for (BigWorld's EntityBoundLevels), smallest first.
 */
export const BOUND_LEVELS: readonly number[] = [0.05, 0.1, 0.2, 0.3, 0.4, 0.5];

/**
 * A cell's entity-bound levels: for each of its four edges, the coordinate on
 * that edge's axis within which BOUND_LEVELS[i] of the cell's entity load lies,
 * counted from the edge inward. `minX[i]` is an X such that the reals with
 * x < minX[i] carry that share of the load; `maxX[i]` one such that the reals
 * with x > maxX[i] do; the same for Z. They tell the cellappmgr how far a
 * partition must move to shift a given share of load. Empty arrays when the
 * cell has no reals.
 */
export interface EntityBounds {
  minX: number[];
  maxX: number[];
  minZ: number[];
  maxZ: number[];
}

/** One cell's figures, as a cellapp reports them each second. */
export interface CellReport {
  spaceId: number;
  /** The cell's id within its space. */
  cellId: number;
  reals: number;
  ghosts: number;
  /** Ticks per second over the last few seconds. */
  tickRate: number;
  tickMsP50: number;
  tickMsP99: number;
  /** This cell's share of the tick budget, smoothed. */
  load: number;
  /** Reals that moved here from another cell, and away to another cell, since the cell began. */
  offloadsIn: number;
  offloadsOut: number;
  /** Whether the cell has ever held a real (BigWorld's hasHadEntities): only such a space may ask to shut down. */
  hadEntities: boolean;
  /**
   * The CPU its reals cost (script callbacks, controllers, witness updates,
   * ghost sync), smoothed, as a share of one core; absent from older cellapps.
   */
  entityLoad?: number;
  /** Where its entity load lies, for moving partitions; absent from older cellapps. */
  entityBounds?: EntityBounds;
  /**
   * Its reals without a base (NPCs), by type name: only the cellapp's buddy backs them up, so the cellappmgr can say
   * what was lost when both die. Absent from older cellapps.
   */
  unbacked?: [type: string, count: number][];
}

/** A cellapp's load report: the whole process and each cell. */
export interface LoadReport {
  load: number;
  /** Bytes sent to other cellapps and baseapps so far (ghosts, offloads, client traffic). */
  peerBytesOut?: number;
  /** The cellapp's ghost radius (m): the cellappmgr makes no cell of it narrower. */
  ghostRadius?: number;
  cells: CellReport[];
}

const cellReport = obj({
  spaceId,
  cellId: int(1, 2 ** 31),
  reals: count,
  ghosts: count,
  tickRate: numIn(0, 10_000),
  tickMsP50: numIn(0, 3_600_000),
  tickMsP99: numIn(0, 3_600_000),
  load,
  offloadsIn: int(0, 2 ** 53),
  offloadsOut: int(0, 2 ** 53),
  hadEntities: bool,
  entityLoad: optional(load),
  entityBounds: optional(obj({
    minX: arrayOf(coord, BOUND_LEVELS.length),
    maxX: arrayOf(coord, BOUND_LEVELS.length),
    minZ: arrayOf(coord, BOUND_LEVELS.length),
    maxZ: arrayOf(coord, BOUND_LEVELS.length),
  })),
  unbacked: optional(arrayOf((v) => Array.isArray(v) ? tuple(str(64), count)(v) : "expected [type, count]", 1024)),
});

/** A process's game version as it reports it (GameVersionView). */
export const gameVersion = obj({ version: str(64), reloads: int(0, 2 ** 31), error: optional(str(4000)) });
/**
 * Where a base script wants its cell entity beyond what its spec says: near another entity (in its space, at its
 * position unless the spec's position counts), or in a new space. Exactly one of `near` and `newSpace` is given.
 */
export interface CellPlaceRequest {
  /** The entity whose space the cell entity goes into. */
  near: number | null;
  /** Whether the spec's position is the script's (else, near an entity, that entity's position is taken). */
  positionGiven: boolean;
  newSpace: NewSpaceRequest | null;
}

/** Where a placed cell entity went. */
export interface CellPlaced {
  spaceId: number;
  cellapp: number;
  cellappAddress: string;
  position: [number, number, number];
}

const side = numIn(0, MAX_NEW_SPACE_SIDE);
const cellPlaceRequest = obj({
  near: optional(entityId),
  positionGiven: bool,
  newSpace: optional(obj({
    width: side,
    depth: side,
    cells: int(1, MAX_NEW_SPACE_CELLS),
    preferredHost: optional(str(255)),
    geometry: optional(str(MAX_GEOMETRY_PATH)),
  })),
});

/** Messages the cellappmgr handles. */
export const MgrMsg = {
  register: message<[RegisterInfo], RegisterReply>(
    16,
    "register",
    tuple(obj({
      role: oneOf("cellapp", "baseapp"),
      pid: int(1, 2 ** 31),
      address,
      previousId: optional(processId),
      clientUrl: optional((v) =>
        typeof v === "string" && v.length <= 300 && /^wss?:\/\/[^\s]+$/.test(v)
          ? null
          : "expected a ws:// or wss:// URL"
      ),
      startedAt: int(0, 4_102_444_800_000),
      entityIdHighWater: int(0, MAX_ENTITY_ID),
      spaces: optional(arrayOf(spaceGeometry, 10_000)),
      generation: optional(int(1, 2 ** 53)),
      game: optional(gameVersion),
    })),
    ["cellapp", "baseapp"],
  ),
  /** Hands out `count` fresh entity ids as [start, end). */
  allocateIds: message<[number], [number, number]>(
    17,
    "allocateIds",
    tuple(int(1, 1_000_000)),
    ["cellapp", "baseapp"],
  ),
  /** A cell asks for its space to be shut down (it emptied, or a script called destroySpace). */
  requestShutDownSpace: message<[number, string]>(
    18,
    "requestShutDownSpace",
    tuple(spaceId, str(300)),
    ["cellapp"],
  ),
  /** A cellapp's load and per-cell figures, once a second. */
  loadReport: message<[LoadReport]>(
    19,
    "loadReport",
    tuple(obj({
      load,
      peerBytesOut: optional(int(0, 2 ** 53)),
      ghostRadius: optional(numIn(0, 100_000)),
      cells: arrayOf(cellReport, 10_000),
    })),
    ["cellapp"],
  ),
  /** Where the cell of `spaceId` containing (x, z) is: for teleports into another space. */
  findCell: message<[number, number, number], { cellapp: number; address: string; cell: number }>(
    22,
    "findCell",
    tuple(spaceId, coord, coord),
    ["cellapp"],
  ),
  /**
   * A base creates its cell entity: in space `spaceId` (0 for a new space,
   * BigWorld's createEntityInNewSpace), in the cell containing its position.
   * Replies where it went.
   */
  createCellEntity: message<[CellEntitySpec], { spaceId: number; cellapp: number; cellappAddress: string }>(
    21,
    "createCellEntity",
    tuple(cellEntitySpec(0)),
    ["baseapp"],
  ),
  /**
   * A base script places its cell entity (createCellEntity near an entity or in a space, createInNewSpace): as
   * createCellEntity, with where to put it. Replies where it went; rejects an unknown space or entity, or a new space
   * beyond the limits (core/new_space.ts).
   */
  placeCellEntity: message<[CellEntitySpec, CellPlaceRequest], CellPlaced>(
    30,
    "placeCellEntity",
    tuple(cellEntitySpec(0), cellPlaceRequest),
    ["baseapp"],
  ),
  /**
   * A cell script changes its space's settings (core/space_settings.ts): checked against the ghost rule, then every
   * cellapp of the space hears the new geometry. Replies the settings in force, or rejects with why not.
   */
  setSpaceSettings: message<[number, SpaceSettings], SpaceSettingsView>(
    29,
    "setSpaceSettings",
    tuple(
      spaceId,
      obj({ aoiRadius: optional(numIn(1e-3, MAX_RADIUS)), ghostRadius: optional(numIn(1e-3, MAX_RADIUS)) }),
    ),
    ["cellapp"],
  ),
} as const;
