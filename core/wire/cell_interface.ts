/** Messages a cellapp handles; the data they carry is in cell_state.ts. */
import { message } from "./catalog.ts";
import {
  address,
  any,
  arrayOf,
  bool,
  bytes,
  cellId,
  entityId,
  int,
  processId,
  spaceId,
  str,
  tuple,
  vec3,
} from "./check.ts";
import {
  type CellEntitySpec,
  cellEntitySpec,
  type EntityLocation,
  type EntitySummary,
  type GhostOp,
  type GhostState,
  ghostState,
  type OffloadState,
  offloadState,
  type PropertyValue,
  type SpaceGeometry,
  spaceGeometry,
  type SpawnRequest,
  spawnRequest,
  type TeleportState,
  teleportState,
} from "./cell_state.ts";

/** A sequence number or an epoch: a whole number up to 2^53. */
const seq = int(0, 2 ** 53);

/** Who sends what: the cellappmgr runs spaces; bases act for their clients (cellapps pass that on to the real). */
const MGR = ["cellappmgr"] as const;
const CLIENT = ["baseapp", "cellapp"] as const;
const CELL = ["cellapp"] as const;

/** Messages a cellapp handles. */
export const CellMsg = {
  /** Create this cellapp's cells of a space (the leaves of the tree naming it). */
  createCell: message<[SpaceGeometry], boolean>(80, "createCell", tuple(spaceGeometry), MGR),
  /** A space's tree changed; sent to every cellapp hosting one of its cells. */
  updateGeometry: message<[SpaceGeometry]>(81, "updateGeometry", tuple(spaceGeometry), MGR),
  /** The space is shutting down: destroy the reals of this cellapp's cells of it, then the cells. */
  shutDownSpace: message<[number]>(82, "shutDownSpace", tuple(spaceId), MGR),
  /** Create entities in one of this cellapp's cells of a space, with the ids given; replies how many it made. */
  spawn: message<[SpawnRequest], number>(
    83,
    "spawn",
    tuple(spawnRequest),
    // The cellappmgr's spawns, and entities a cell's script creates at a point of another cell.
    ["cellappmgr", "cellapp"],
  ),
  /** Lists the entities of this cellapp's cells of a space (null when it has none). */
  describeCell: message<[number], EntitySummary[] | null>(84, "describeCell", tuple(spaceId), MGR),
  /** Where an entity is, if this cellapp holds it. */
  findEntity: message<[number], EntityLocation | null>(85, "findEntity", tuple(entityId), MGR),
  /** The cell properties of a real entity of this cellapp, with their flags (null when its real is not here). */
  entityProperties: message<[number], PropertyValue[] | null>(106, "entityProperties", tuple(entityId), MGR),
  /** Creates the cell part of a base entity (same id), in this cellapp's cell containing `position`. */
  createCellEntity: message<[CellEntitySpec], { spaceId: number; cellapp: number }>(
    86,
    "createCellEntity",
    tuple(cellEntitySpec(1)),
    MGR,
  ),
  /** The proxy's client enabled entities: the cell entity gets a witness. */
  enableWitness: message<[number]>(87, "enableWitness", tuple(entityId), CLIENT),
  /** The client went away: the witness goes. */
  disableWitness: message<[number]>(88, "disableWitness", tuple(entityId), CLIENT),
  /**
   * A client's call of an exposed cell method: caller, target entity, the
   * target's type id as the client named it, method index, encoded
   * arguments, the caller's baseapp (where a refusal goes; a baseapp
   * sending it can only name itself), the call's sequence number from the
   * caller's base (0: none), and whether it is a replay into the caller's
   * restored entity (run only if later than its clientCallSeq).
   */
  clientCall: message<[number, number, number, number, Uint8Array, string, number, boolean]>(
    89,
    "clientCall",
    tuple(entityId, entityId, int(0, 65535), int(0, 65535), bytes(64 * 1024), address, seq, bool),
    CLIENT,
  ),
  /** The position the client reports for the entity it controls: [x, y, z], [yaw, pitch, roll]. */
  clientPosition: message<[number, [number, number, number], [number, number, number]]>(
    90,
    "clientPosition",
    tuple(entityId, vec3, vec3),
    CLIENT,
  ),
  /**
   * Many clients' moves as records (core/wire/client_records.ts), batched per turn on the baseapp's channel
   * (Channel.record): each as clientPosition. The first argument is unused (0).
   */
  clientMoves: message<[number, Uint8Array]>(101, "clientMoves", tuple(int(0, 0), bytes(16 * 1024 * 1024)), [
    "baseapp",
  ]),
  /** Client→server AOI messages (the client cache's requestUpdate) for the witness of entity `id`, as the client framed them. */
  clientAoi: message<[number, Uint8Array]>(92, "clientAoi", tuple(entityId, bytes(64 * 1024)), CLIENT),
  /** Creates (or refreshes) the ghost of a real entity of a neighbouring cell (`state.cellId`). */
  createGhost: message<[GhostState], boolean>(93, "createGhost", tuple(ghostState), CELL),
  /** One tick's changes of a real for its ghost in a cell, numbered per entity: [spaceId, cellId, id, seq, ops]. */
  ghostSync: message<[number, number, number, number, GhostOp[]]>(
    94,
    "ghostSync",
    tuple(spaceId, cellId, entityId, seq, arrayOf(arrayOf(any, 16), 100_000)),
    CELL,
  ),
  /**
   * One tick's ghostSync batches from a cellapp to the cells of another, as records (core/wire/ghost_sync_records.ts),
   * batched per tick on the channel (Channel.record): each as ghostSync. The first argument is unused (0).
   */
  ghostSyncs: message<[number, Uint8Array]>(
    110,
    "ghostSyncs",
    tuple(int(0, 0), bytes(16 * 1024 * 1024)),
    CELL,
  ),
  /**
   * The real no longer needs its ghost in that cell: [spaceId, cellId, id, the real's epoch]; ignored by a ghost
   * that already heard from a later real.
   */
  deleteGhost: message<[number, number, number, number]>(
    95,
    "deleteGhost",
    tuple(spaceId, cellId, entityId, seq),
    CELL,
  ),
  /**
   * A ghost that lost updates asks its real to create it again:
   * [spaceId, the real's cell, id, the ghost's cell].
   */
  ghostResync: message<[number, number, number, number]>(
    96,
    "ghostResync",
    tuple(spaceId, cellId, entityId, cellId),
    CELL,
  ),
  /** Makes the ghost of an entity in cell `state.cellId` its real (the old real becomes a ghost once this succeeds). */
  offload: message<[OffloadState], boolean>(97, "offload", tuple(offloadState), CELL),
  /**
   * The real of a ghost in a cell here moved to another cell:
   * [spaceId, the ghost's cell, id, the real's cellapp, its address, the real's cell, its epoch there].
   */
  realMoved: message<[number, number, number, number, string, number, number]>(
    98,
    "realMoved",
    tuple(spaceId, cellId, entityId, processId, address, cellId, seq),
    CELL,
  ),
  /**
   * A script's call of a cell method of another entity, made where that
   * entity is a ghost: [spaceId, the real's cell, target, caller, method,
   * args]; replies with what the method returned.
   */
  entityCall: message<[number, number, number, number, string, unknown[]], unknown>(
    99,
    "entityCall",
    tuple(
      spaceId,
      cellId,
      entityId,
      int(0, 2 ** 53),
      str(100),
      arrayOf(any, 256),
    ),
    CELL,
  ),
  /**
   * A real teleports into cell `state.cellId`, from another cell of this
   * space or another space: it is created from its state (a ghost of it there
   * is replaced), with a new witness when it had one.
   */
  teleportIn: message<[TeleportState], boolean>(
    100,
    "teleportIn",
    tuple(teleportState),
    CELL,
  ),
  /**
   * A real's number of its latest batch, sent with each ghost check when it changed:
   * [spaceId, the ghost's cell, id, the real's epoch, seq]. A ghost short of it lost a batch.
   */
  ghostSeq: message<[number, number, number, number, number]>(
    108,
    "ghostSeq",
    tuple(spaceId, cellId, entityId, seq, seq),
    CELL,
  ),
  /**
   * What was done to a real while it was being handed over, for the new real to do in the same order:
   * [spaceId, the new real's cell, id, entries] (cell/handover_fence.ts).
   */
  handOverWrites: message<[number, number, number, unknown[][]]>(
    109,
    "handOverWrites",
    tuple(spaceId, cellId, entityId, arrayOf(arrayOf(any, 8), 100_000)),
    CELL,
  ),
  /** Destroys the cell part of a base entity; replies with its persistent cell properties (encodePersistentState). */
  destroyCellEntity: message<[number], Uint8Array | null>(91, "destroyCellEntity", tuple(entityId), CLIENT),
  /** A base's autosave: replies with the persistent cell properties of its cell entity (encodePersistentState). */
  cellPersistentState: message<[number], Uint8Array | null>(104, "cellPersistentState", tuple(entityId), CLIENT),
} as const;
