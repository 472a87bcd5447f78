/** Messages the cellappmgr handles, and the data they carry. */
import { message } from "./catalog.ts";
import { type CellEntitySpec, cellEntitySpec, type SpaceGeometry, spaceGeometry } from "./cell_interface.ts";
import { arrayOf, int, num, obj, oneOf, optional, str, tuple } from "./check.ts";

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
  /** The highest entity id this process was ever given (0 for none), so a restarted cellappmgr never reuses one. */
  entityIdHighWater: number;
}

/** The cellappmgr's answer to a registration. */
export interface RegisterReply {
  id: number;
  mgrPid: number;
}

/** What every registered process sends with each heartbeat. */
export interface HeartbeatReport {
  /** Share of the tick budget spent, smoothed; 0 for processes without ticks. */
  load: number;
}

/** Checks a heartbeat payload from a registered process. */
export const checkHeartbeatReport = obj({ load: num });

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
}

/** A cellapp's load report: the whole process and each cell. */
export interface LoadReport {
  load: number;
  /** Bytes sent to other cellapps and baseapps so far (ghosts, offloads, client traffic). */
  peerBytesOut?: number;
  cells: CellReport[];
}

const cellReport = obj({
  spaceId: int(1, 2 ** 32 - 1),
  cellId: int(1, 2 ** 31),
  reals: int(0),
  ghosts: int(0),
  tickRate: num,
  tickMsP50: num,
  tickMsP99: num,
  load: num,
  offloadsIn: int(0),
  offloadsOut: int(0),
});

/** Messages the cellappmgr handles. */
export const MgrMsg = {
  register: message<[RegisterInfo], RegisterReply>(
    16,
    "register",
    tuple(obj({
      role: oneOf("cellapp", "baseapp"),
      pid: int(0),
      address: str(300),
      previousId: optional(int(1, 2 ** 31)),
      clientUrl: optional(str(300)),
      startedAt: int(0),
      entityIdHighWater: int(0),
    })),
  ),
  /** Hands out `count` fresh entity ids as [start, end). */
  allocateIds: message<[number], [number, number]>(17, "allocateIds", tuple(int(1, 1_000_000))),
  /** A cell asks for its space to be shut down (it emptied, or a script called destroySpace). */
  requestShutDownSpace: message<[number, string]>(18, "requestShutDownSpace", tuple(int(1, 2 ** 32 - 1), str(300))),
  /** A cellapp's load and per-cell figures, once a second. */
  loadReport: message<[LoadReport]>(
    19,
    "loadReport",
    tuple(obj({ load: num, peerBytesOut: optional(int(0)), cells: arrayOf(cellReport, 10_000) })),
  ),
  /** After (re-)registering, a cellapp tells which spaces it hosts cells of, so a restarted cellappmgr knows them again. */
  adoptSpaces: message<[SpaceGeometry[]]>(20, "adoptSpaces", tuple(arrayOf(spaceGeometry, 10_000))),
  /** Where the cell of `spaceId` containing (x, z) is: for teleports into another space. */
  findCell: message<[number, number, number], { cellapp: number; address: string; cell: number }>(
    22,
    "findCell",
    tuple(int(1, 2 ** 32 - 1), num, num),
  ),
  /**
   * A base creates its cell entity: in space `spaceId` (0 for a new space,
   * seed 003's createEntityInNewSpace), in the cell containing its position.
   * Replies where it went.
   */
  createCellEntity: message<[CellEntitySpec], { spaceId: number; cellapp: number; cellappAddress: string }>(
    21,
    "createCellEntity",
    tuple(cellEntitySpec(0)),
  ),
} as const;
