/**
 * The zod schemas of what the admin API answers (the shapes of core/views.ts)
 * and accepts, from which its OpenAPI document is generated. The compile-time
 * checks at the end keep each response schema the same type as its view.
 */
import { z } from "@hono/zod-openapi";
import { GHOST_RULE, MAX_GEOMETRY_PATH, MAX_RADIUS } from "../core/space_settings.ts";
import type {
  CellAppView,
  CellEntityView,
  CellView,
  ClusterView,
  CreateSpaceBody,
  EntityInspectView,
  GameReloadView,
  HealthView,
  KickView,
  PatchSpaceBody,
  PlayersView,
  ProcessView,
  RetireView,
  ShutdownView,
  SpaceSummaryView,
  SpaceView,
  SpawnBody,
} from "../core/views.ts";

const rect = z.tuple([z.number(), z.number(), z.number(), z.number()]).describe("[minX, minZ, maxX, maxZ]");
const vec3 = z.tuple([z.number(), z.number(), z.number()]).describe("[x, y, z]");

/** The body of every error answer. */
export const errorSchema = z.object({
  error: z.object({
    code: z.string().describe("what went wrong, for programs: bad_request, not_found, conflict, unauthorized, ..."),
    message: z.string().describe("what went wrong, for people, naming the field or id at fault"),
  }),
}).openapi("Error");

/** GET /api/health. */
export const healthSchema = z.object({
  ok: z.literal(true),
  role: z.literal("cellappmgr"),
  version: z.string(),
}).openapi("Health");

/** A cell as GET /api/spaces/:id lists it. */
export const cellSchema = z.object({
  id: z.number().int().describe("the cell's id within its space (its leaf of the tree)"),
  cellapp: z.number().int(),
  rect,
  reals: z.number().int(),
  ghosts: z.number().int(),
  load: z.number(),
  tickRate: z.number(),
  tickMsP50: z.number(),
  tickMsP99: z.number(),
  offloadsIn: z.number().int(),
  offloadsOut: z.number().int(),
}).openapi("Cell");

const cellOfApp = cellSchema.extend({ spaceId: z.number().int() });

/** One process of the cluster. */
/** The game a process runs. */
export const gameVersionSchema = z.object({
  version: z.string().describe("a hash of the game's files when the process loaded them"),
  reloads: z.number().int().describe("reloads it took since it started"),
  error: z.string().optional().describe("why its last reload failed"),
}).openapi("GameVersion");

export const processSchema = z.object({
  id: z.number().int(),
  role: z.enum(["cellappmgr", "cellapp", "baseapp"]),
  pid: z.number().int(),
  address: z.string().describe("HOST:PORT other processes reach it on"),
  clientUrl: z.string().optional().describe("baseapps: the WebSocket URL of game clients"),
  uptimeS: z.number(),
  lastHeartbeatMsAgo: z.number(),
  load: z.number().describe("share of the tick budget spent, smoothed"),
  generation: z.number().int().optional(),
  peerBytesOut: z.number().optional(),
  cells: z.array(cellOfApp).optional(),
  game: gameVersionSchema.optional().describe("the game it runs (docs/game.md#reloading-a-game)"),
}).openapi("Process");

/** POST /api/game/reload's answer. */
export const gameReloadSchema = z.object({
  reloaded: z.literal(true),
  version: z.string().describe("the game version every process now runs"),
  processes: z.array(z.object({
    id: z.number().int(),
    role: z.enum(["cellappmgr", "cellapp", "baseapp"]),
    ...gameVersionSchema.shape,
  })),
}).openapi("GameReload");

/** GET /api/cluster. */
export const clusterSchema = z.object({ processes: z.array(processSchema) }).openapi("Cluster");

/** POST /api/shutdown's answer. */
export const shutdownSchema = z.object({ stopping: z.literal(true), processes: z.number().int() }).openapi("Shutdown");

/** A space in GET /api/spaces. */
export const spaceSummarySchema = z.object({
  id: z.number().int(),
  bounds: rect,
  cells: z.number().int(),
  entities: z.number().int(),
  isDefault: z.boolean(),
}).openapi("SpaceSummary");

const partition = z.object({
  axis: z.enum(["x", "z"]),
  at: z.number(),
  left: z.array(z.number().int()),
  right: z.array(z.number().int()),
}).openapi("Partition");

/** GET /api/spaces/:id. */
export const spaceSchema = z.object({
  id: z.number().int(),
  bounds: rect,
  isDefault: z.boolean(),
  tree: z.unknown().describe('the BSP tree: {"cell": {"cellapp"}} leaves, {"axis", "at", "left", "right"} splits'),
  cells: z.array(cellSchema),
  balance: z.object({
    enabled: z.boolean(),
    periodMs: z.number(),
    retiring: z.array(z.number().int()),
    partitions: z.array(partition),
    history: z.array(z.object({
      t: z.number(),
      partitions: z.array(partition),
      cells: z.array(z.object({
        id: z.number().int(),
        cellapp: z.number().int(),
        load: z.number(),
        reals: z.number().int(),
      })),
    })),
  }),
  settings: z.object({ aoiRadius: z.number(), ghostRadius: z.number() }).describe("its AoI and ghost radius in force"),
  navGeometry: z.string().nullable().describe("the file its navigation mesh is made from; null: no navigation"),
  shutDownWhenEmpty: z.boolean().describe("whether it shuts down once its last entity has left (an instance)"),
}).openapi("Space");

/** POST /api/cellapps/:id/retire's answer. */
/** POST /api/processes/:id/shutdown's reply. */
export const processShutdownSchema = z.object({
  id: z.number().int(),
  role: z.enum(["cellapp", "baseapp"]),
  stopping: z.literal(true),
  force: z.boolean(),
  retiringCells: z.number().int(),
}).openapi("ProcessShutdown");

export const retireSchema = z.object({
  id: z.number().int(),
  retiring: z.literal(true),
  cells: z.number().int().describe("cells of it still in a tree; 0 once drained"),
}).openapi("Retire");

/** GET /api/cellapps/:id. */
export const cellAppSchema = processSchema.extend({
  cells: z.array(cellOfApp),
  retiring: z.boolean(),
}).openapi("CellApp");

/** One entity of a cell. */
export const cellEntitySchema = z.object({
  id: z.number().int(),
  type: z.string(),
  position: vec3,
  real: z.boolean(),
  cell: z.number().int(),
}).openapi("CellEntity");

/** GET /api/entities/:id. */
export const entitySchema = z.object({
  id: z.number().int(),
  type: z.string(),
  spaceId: z.number().int(),
  position: vec3,
  cellapp: z.number().int().describe("the cellapp holding the real entity"),
  ghosts: z.array(z.number().int()).describe("cellapps holding ghosts of it"),
  base: z.number().int().nullable().describe("the baseapp of its base entity"),
  properties: z.array(z.object({
    name: z.string(),
    flags: z.string().describe("as its definition gives them: CELL_PUBLIC, ALL_CLIENTS, OWN_CLIENT..."),
    type: z.string(),
    value: z.unknown().describe("as JSON; 64-bit integers as strings"),
  })).describe("its cell (server-side) properties, read from its real"),
}).openapi("Entity");

/** A player online (GET /api/players). */
export const playerSchema = z.object({
  account: z.string(),
  entityId: z.number().int(),
  type: z.string(),
  baseapp: z.number().int().describe("the baseapp holding it"),
  spaceId: z.number().int().describe("0 while its cell entity is not yet placed"),
  position: vec3,
  connected: z.boolean().describe("false while it waits for its client in the disconnect grace period"),
  graceMsLeft: z.number().int().nullable().describe("ms left of its disconnect grace period; null when connected"),
}).openapi("Player");

/** GET /api/players. */
export const playersSchema = z.object({
  players: z.array(playerSchema),
  total: z.number().int().describe("players held by the baseapps that answered, listed or not"),
  truncated: z.boolean().describe("more players are online than are listed"),
  unanswered: z.array(z.object({ baseapp: z.number().int(), error: z.string() })).describe(
    "baseapps that did not answer in time: their players are missing",
  ),
}).openapi("Players");

/** POST /api/players/:name/kick's reply. */
export const kickSchema = z.object({
  account: z.string(),
  baseapp: z.number().int(),
  kicked: z.literal(true),
}).openapi("Kick");

/** POST /api/players/:name/kick's optional body. */
export const kickBodySchema = z.strictObject({
  reason: z.string().min(1).max(100).optional().describe("what the player's client is told (its close reason)"),
}).openapi("KickBody");

/** An account name in a path (base/login/accounts.ts: 1-64 letters, digits or _ . - @). */
export const accountParam = z.string().regex(/^[\p{L}\p{N}_.\-@]{1,64}$/u, "not an account name");

/** A positive integer id in a path. */
export const idParam = z.coerce.number().int().min(1).max(2 ** 53);

/** The schemas of the request bodies. */
export interface BodySchemas {
  spawnInto: z.ZodType<SpawnBody>;
  createSpace: z.ZodType<CreateSpaceBody>;
  patchSpace: z.ZodType<PatchSpaceBody>;
}

/**
 * The request bodies, whose entity types are checked against `types` (any
 * type when null).
 */
export function bodySchemas(types: (() => readonly string[]) | null): BodySchemas {
  const coord = z.number().finite().min(-1e7).max(1e7);
  const radius = z.number().positive().max(MAX_RADIUS);
  const radii = {
    aoiRadius: radius.optional().describe("default AoI radius of its witnesses, m (the cluster's when absent)"),
    ghostRadius: radius.optional().describe(
      `how far its cells hold ghosts beyond their rects, m (the cluster's when absent); ${GHOST_RULE}`,
    ),
  };
  const spawnEntry = z.strictObject({
    // Read at each request: a game reload may add types.
    type: z.string().superRefine((t, ctx) => {
      const known = types?.();
      if (known && !known.includes(t)) {
        ctx.addIssue({ code: "custom", message: `unknown entity type; known types: ${known.join(", ")}` });
      }
    }),
    count: z.number().int().min(1).max(100_000),
    props: z.record(z.string(), z.unknown()).optional().describe("initial property values"),
  });
  return {
    spawnInto: z.strictObject({
      entities: z.array(
        spawnEntry.extend({
          position: z.tuple([coord, coord, coord]).optional().describe("where all of them go; random when absent"),
        }),
      ).min(1).max(32),
    }).openapi("SpawnInto"),
    createSpace: z.strictObject({
      bounds: z.tuple([coord, coord, coord, coord]).refine(
        ([minX, minZ, maxX, maxZ]) => minX < maxX && minZ < maxZ,
        "must be [minX, minZ, maxX, maxZ] with min < max",
      ),
      cells: z.number().int().min(1).max(64).optional(),
      entities: z.array(spawnEntry).max(32).optional().describe("entities spawned at random points"),
      balance: z.boolean().optional().describe("whether its partitions follow the load (default true)"),
      geometry: z.string().min(1).max(MAX_GEOMETRY_PATH).optional().describe(
        "navigation geometry: the path of an OBJ mesh, a height field (.json) or an exported navmesh (.navmesh) " +
          "its cellapps read (the game's spaceGeometry hook when absent)",
      ),
      ...radii,
    }).openapi("CreateSpace"),
    patchSpace: z.strictObject({ balance: z.boolean().optional(), ...radii }).openapi("PatchSpace"),
  };
}

// Each response schema must stay the type of its view: a change to core/views.ts fails `deno check` here.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _same: [
  Same<z.infer<typeof healthSchema>, HealthView>,
  Same<z.infer<typeof cellSchema>, CellView>,
  Same<z.infer<typeof processSchema>, ProcessView>,
  Same<z.infer<typeof clusterSchema>, ClusterView>,
  Same<z.infer<typeof shutdownSchema>, ShutdownView>,
  Same<z.infer<typeof spaceSummarySchema>, SpaceSummaryView>,
  Same<z.infer<typeof spaceSchema>, SpaceView>,
  Same<z.infer<typeof retireSchema>, RetireView>,
  Same<z.infer<typeof cellAppSchema>, CellAppView>,
  Same<z.infer<typeof cellEntitySchema>, CellEntityView>,
  Same<z.infer<typeof entitySchema>, EntityInspectView>,
  Same<z.infer<typeof playersSchema>, PlayersView>,
  Same<z.infer<typeof kickSchema>, KickView>,
  Same<z.infer<typeof gameReloadSchema>, GameReloadView>,
] = [true, true, true, true, true, true, true, true, true, true, true, true, true, true];
