/**
 * What the cellappmgr shows operators: the JSON shapes of the admin API,
 * shared by mgr/ (which builds them) and admin/ (which serves them).
 */

/** One process of the cluster as /api/cluster lists it. */
export interface ProcessView {
  id: number;
  role: "cellappmgr" | "cellapp" | "baseapp";
  pid: number;
  /** Listening address for other processes, HOST:PORT. */
  address: string;
  /** Baseapps that serve clients: their WebSocket URL. */
  clientUrl?: string;
  uptimeS: number;
  lastHeartbeatMsAgo: number;
  /** Share of the tick budget spent, smoothed. */
  load: number;
  /** Its registration generation (fencing): a process declared dead and back registers with a new one. */
  generation?: number;
  /** Cellapps: bytes sent to other processes so far (ghost traffic, offloads, client updates). */
  peerBytesOut?: number;
  /** Cellapps: their cells with entity counts, tick rate and tick times. */
  cells?: (CellView & { spaceId: number })[];
  /** The game it runs; absent for a process that did not say (it started before game versions were reported). */
  game?: GameVersionView;
}

/** The game a process runs (docs/game.md#reloading-a-game). */
export interface GameVersionView {
  /** A hash of the game's files when it loaded them; the same in every process after a reload. */
  version: string;
  /** Reloads it took since it started. */
  reloads: number;
  /** Why its last reload failed; absent when it did not. */
  error?: string;
}

/** The answer to POST /api/game/reload: every process now runs `version`. */
export interface GameReloadView {
  reloaded: true;
  version: string;
  /** Each process's game after the reload; one whose swap failed says why in `error`. */
  processes: ({ id: number; role: "cellappmgr" | "cellapp" | "baseapp" } & GameVersionView)[];
}

/** The body of GET /api/cluster. */
export interface ClusterView {
  processes: ProcessView[];
}

/** The body of GET /api/health. */
export interface HealthView {
  ok: true;
  role: "cellappmgr";
  version: string;
}

/** The body of POST /api/shutdown's reply. */
export interface ShutdownView {
  stopping: true;
  processes: number;
}

/** One cell of a space as GET /api/spaces/:id shows it. */
export interface CellView {
  /** The cell's id within its space (its leaf of the tree). */
  id: number;
  cellapp: number;
  /** [minX, minZ, maxX, maxZ]. */
  rect: [number, number, number, number];
  reals: number;
  ghosts: number;
  load: number;
  tickRate: number;
  tickMsP50: number;
  tickMsP99: number;
  /** Reals that moved into this cell from others, and out to others, since it began. */
  offloadsIn: number;
  offloadsOut: number;
}

/** A space in GET /api/spaces. */
export interface SpaceSummaryView {
  id: number;
  bounds: [number, number, number, number];
  cells: number;
  entities: number;
  isDefault: boolean;
}

/** GET /api/spaces/:id. */
export interface SpaceView {
  id: number;
  bounds: [number, number, number, number];
  isDefault: boolean;
  /** The BSP tree: `{"cell": {"cellapp"}}` leaves, `{"axis", "at", "left", "right"}` splits. */
  tree: unknown;
  cells: CellView[];
  /** How its cells are balanced, with the last minute's history. */
  balance: BalanceView;
  /** Its AoI and ghost radius in force (its own, else the cluster's); PATCH changes them. */
  settings: { aoiRadius: number; ghostRadius: number };
  /** The file its navigation mesh is made from; null: it has no navigation. */
  navGeometry: string | null;
  /** Whether it shuts down once its last entity has left (a base script's instance). */
  shutDownWhenEmpty: boolean;
}

/** A partition of a space's tree: where it lies, and the cells on each side. */
export interface PartitionView {
  axis: "x" | "z";
  at: number;
  /** Ids of the cells below `at` (left) and at or above it (right). */
  left: number[];
  right: number[];
}

/** One balance period of a space, as kept for the last minute. */
export interface BalanceSampleView {
  /** Milliseconds since the epoch. */
  t: number;
  partitions: PartitionView[];
  cells: { id: number; cellapp: number; load: number; reals: number }[];
}

/** How a space is balanced, in GET /api/spaces/:id. */
export interface BalanceView {
  /** Whether its partitions move with the load (PATCH /api/spaces/:id `{"balance": false}` stops them). */
  enabled: boolean;
  /** The cluster's balance period (`--balance-period`, ms); 0 holds every space's partitions still. */
  periodMs: number;
  /** Cells shrinking to nothing before they leave the tree. */
  retiring: number[];
  partitions: PartitionView[];
  /** Oldest first, one sample per balance period, the last minute. */
  history: BalanceSampleView[];
}

/** The reply to POST /api/cellapps/:id/retire. */
export interface RetireView {
  id: number;
  retiring: true;
  /** Cells of it still in a tree; 0 once it is drained and may be stopped with nothing lost. */
  cells: number;
}

/** GET /api/cellapps/:id. */
export interface CellAppView extends ProcessView {
  cells: (CellView & { spaceId: number })[];
  /** Being drained (POST /api/cellapps/:id/retire): it gets no new cells and its cells shrink to nothing. */
  retiring: boolean;
}

/** One entity of a cell, in GET /api/cellapps/:id/cells/:spaceId. */
export interface CellEntityView {
  id: number;
  type: string;
  position: [number, number, number];
  real: boolean;
  /** The id (within the space) of the cell of the cellapp listing it. */
  cell: number;
}

/** GET /api/entities/:id: where an entity is. */
export interface EntityView {
  id: number;
  type: string;
  spaceId: number;
  position: [number, number, number];
  /** The cellapp holding the real entity. */
  cellapp: number;
  /** Cellapps holding ghosts of it. */
  ghosts: number[];
  /** The baseapp of its base entity, when it has one. */
  base: number | null;
}

/** A process joining or leaving, as the admin watch socket's `cluster` topic tells it. */
export interface ProcessChange {
  event: "joined" | "left";
  process: { id: number; role: "cellapp" | "baseapp"; pid: number; address: string };
  /** Why it left: a stop's reason, or the silence or closed connection that made it dead. */
  reason?: string;
}

/** One cell property of an entity: its value (as JSON) and its flags. */
export interface PropertyValueView {
  name: string;
  /** Its flags as the definition gives them (CELL_PUBLIC, ALL_CLIENTS...). */
  flags: string;
  type: string;
  value: unknown;
}

/** An entity with its cell properties, as the watch socket's `entity:ID` topic shows it. */
export interface EntityInspectView extends EntityView {
  properties: PropertyValueView[];
}

/** A player online, as GET /api/players lists it. */
export interface PlayerView {
  account: string;
  entityId: number;
  type: string;
  /** The baseapp holding it. */
  baseapp: number;
  /** 0 while its cell entity is not yet placed. */
  spaceId: number;
  position: [number, number, number];
  /** False while it waits for its client in the disconnect grace period. */
  connected: boolean;
  /** Milliseconds left of its disconnect grace period; null when connected. */
  graceMsLeft: number | null;
}

/** GET /api/players: the players by account name, at most a limit of them, and the baseapps that did not answer. */
export interface PlayersView {
  players: PlayerView[];
  /** How many players the baseapps that answered hold, listed or not. */
  total: number;
  /** Whether more players are online than are listed. */
  truncated: boolean;
  /** Baseapps that did not answer in time or answered wrongly: their players are missing. */
  unanswered: { baseapp: number; error: string }[];
}

/** POST /api/players/:name/kick's reply. */
export interface KickView {
  account: string;
  baseapp: number;
  kicked: true;
}

/** The reply to POST /api/processes/:id/shutdown. */
export interface ProcessShutdownView {
  id: number;
  role: "cellapp" | "baseapp";
  stopping: true;
  /** Stopped at once (`?force=true`): what it held comes back through fault tolerance. */
  force: boolean;
  /** A cellapp stopped gracefully hands its cells to the others first; the cells it still had then. */
  retiringCells: number;
}

/** The body POST /api/spaces accepts. */
export interface CreateSpaceBody {
  bounds: [number, number, number, number];
  cells?: number;
  /** Entities to spawn at random points, each with the initial property values `props`. */
  entities?: { type: string; count: number; props?: Record<string, unknown> }[];
  /** Whether its partitions follow the load (default true). */
  balance?: boolean;
  /**
   * The space's AoI and ghost radius (m); the cluster's when absent. Checked: ghost radius >= AoI radius + AoI
   * hysteresis + offload hysteresis.
   */
  aoiRadius?: number;
  ghostRadius?: number;
  /** The file its navigation mesh is made from, as its cellapps read it (docs/game.md, "Navigation"). */
  geometry?: string;
}

/** The body of POST /api/spaces/:id/entities. */
export interface SpawnBody {
  /** Entities to spawn: at `position` when given (all at that point), else at random points spread by cell area. */
  entities: {
    type: string;
    count: number;
    props?: Record<string, unknown>;
    position?: [number, number, number];
  }[];
}

/** The body of PATCH /api/spaces/:id. */
export interface PatchSpaceBody {
  /** Switches its balancing on or off. */
  balance?: boolean;
  /** Changes its AoI and ghost radius (m), checked as at creation; its cells and their witnesses follow. */
  aoiRadius?: number;
  ghostRadius?: number;
}

/** Why a request to the cellappmgr cannot be met; the admin API maps `code` to an HTTP status. */
export class RequestError extends Error {
  constructor(
    readonly code: "not_found" | "conflict" | "unavailable" | "bad_request",
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}
