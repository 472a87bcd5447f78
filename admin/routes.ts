/**
 * Every route of the admin API, declared once with its zod schemas: the app
 * validates requests with them and the OpenAPI document is generated from them.
 */
import { createRoute, z } from "@hono/zod-openapi";
import {
  accountParam,
  type BodySchemas,
  cellAppSchema,
  cellEntitySchema,
  clusterSchema,
  entitySchema,
  errorSchema,
  gameReloadSchema,
  healthSchema,
  idParam,
  kickBodySchema,
  kickSchema,
  playersSchema,
  processShutdownSchema,
  retireSchema,
  shutdownSchema,
  spaceSchema,
  spaceSummarySchema,
} from "./schemas.ts";

/** What an error status means on the admin API. */
const ERROR_MEANING = {
  400: "a parameter or the body is not valid; the message names the field",
  401: "a bearer token is configured and the request lacks it or has another",
  403: "the Host or Origin is not one the admin API answers (DNS rebinding and cross-site guards)",
  404: "no such space, cellapp, cell, entity or player",
  409: "the request conflicts with the cluster's state (the default space, the last cellapp, the entity limit)",
  413: "the body is larger than 1 MiB",
  415: "a state-changing request without Content-Type: application/json",
  503: "the cluster cannot do it now (shutting down, a process not answering)",
} as const;

type ErrorStatus = keyof typeof ERROR_MEANING;

/** The error answers a route may give, besides those every route may (401, 403). */
function errors(...statuses: ErrorStatus[]) {
  const out: Partial<
    Record<ErrorStatus, { description: string; content: { "application/json": { schema: typeof errorSchema } } }>
  > = {};
  for (const s of [401, 403, ...statuses] as ErrorStatus[]) {
    out[s] = { description: ERROR_MEANING[s], content: { "application/json": { schema: errorSchema } } };
  }
  return out;
}

function ok<S extends z.ZodType>(description: string, schema: S) {
  return { description, content: { "application/json": { schema } } };
}

function jsonBody<S extends z.ZodType>(schema: S) {
  return { required: true, content: { "application/json": { schema } } };
}

/** State-changing requests need the header even without a body (see admin/guard.ts jsonGuard). */
const NEEDS_JSON = " Send `Content-Type: application/json`, also with an empty body.";
const MUTATING_ERRORS = [413, 415] as const;

const idOnly = z.object({ id: idParam.openapi({ param: { name: "id", in: "path" }, example: 1 }) });

/** The routes, with request bodies checked by `bodies`. */
export function adminRoutes(bodies: BodySchemas) {
  return {
    health: createRoute({
      method: "get",
      path: "/api/health",
      tags: ["cluster"],
      summary: "Whether the cellappmgr answers, and its version",
      responses: { 200: ok("it answers", healthSchema), ...errors() },
    }),
    cluster: createRoute({
      method: "get",
      path: "/api/cluster",
      tags: ["cluster"],
      summary: "Every process: address, load, heartbeat, cells",
      responses: { 200: ok("the processes, the cellappmgr first", clusterSchema), ...errors() },
    }),
    shutdown: createRoute({
      method: "post",
      path: "/api/shutdown",
      tags: ["cluster"],
      summary: "Controlled shutdown of the whole cluster, everything persisted",
      description: "Baseapps stop first (they save their entities), then cellapps." + NEEDS_JSON,
      responses: { 202: ok("the shutdown started", shutdownSchema), ...errors(...MUTATING_ERRORS) },
    }),
    reloadGame: createRoute({
      method: "post",
      path: "/api/game/reload",
      tags: ["cluster"],
      summary: "Every process loads the game again from its --game and swaps it into its live entities",
      description: "Two phases: every process loads the game and checks it against the one it runs, then all swap " +
        "it in, or none does. Entities, their properties, timers and controllers stay and no client is " +
        "disconnected; clients get the new definitions. 409 names each process that could not load it and why " +
        "(a module that throws, with its file and line; a change that would break live data or clients), the " +
        "old game still running everywhere." + NEEDS_JSON,
      responses: {
        200: ok("every process runs the new game", gameReloadSchema),
        ...errors(409, 503, ...MUTATING_ERRORS),
      },
    }),
    listSpaces: createRoute({
      method: "get",
      path: "/api/spaces",
      tags: ["spaces"],
      summary: "Every space with its cell and entity counts",
      responses: {
        200: ok("the spaces by id", z.object({ spaces: z.array(spaceSummarySchema) })),
        ...errors(),
      },
    }),
    createSpace: createRoute({
      method: "post",
      path: "/api/spaces",
      tags: ["spaces"],
      summary: "Creates a space with its cells, optionally spawning entities at random points",
      description: NEEDS_JSON.trim(),
      request: { body: jsonBody(bodies.createSpace) },
      responses: {
        201: ok("the space exists", z.object({ id: z.number().int() })),
        ...errors(400, 409, 503, ...MUTATING_ERRORS),
      },
    }),
    getSpace: createRoute({
      method: "get",
      path: "/api/spaces/{id}",
      tags: ["spaces"],
      summary: "A space: bounds, BSP tree, cells with rect, cellapp, load, reals and ghosts, balancing",
      request: { params: idOnly },
      responses: { 200: ok("the space", spaceSchema), ...errors(400, 404) },
    }),
    spawnInto: createRoute({
      method: "post",
      path: "/api/spaces/{id}/entities",
      tags: ["spaces"],
      summary: "Spawns entities into an existing space, at a point or at random points",
      description: NEEDS_JSON.trim(),
      request: { params: idOnly, body: jsonBody(bodies.spawnInto) },
      responses: {
        201: ok("the entities exist", z.object({ spawned: z.number().int() })),
        ...errors(400, 404, 409, 503, ...MUTATING_ERRORS),
      },
    }),
    patchSpace: createRoute({
      method: "patch",
      path: "/api/spaces/{id}",
      tags: ["spaces"],
      summary: "Switches a space's load balancing on or off",
      description: NEEDS_JSON.trim(),
      request: { params: idOnly, body: jsonBody(bodies.patchSpace) },
      responses: { 200: ok("the space as it is now", spaceSchema), ...errors(400, 404, ...MUTATING_ERRORS) },
    }),
    deleteSpace: createRoute({
      method: "delete",
      path: "/api/spaces/{id}",
      tags: ["spaces"],
      summary: "Shuts a space down (not the default space)",
      description: NEEDS_JSON.trim(),
      request: { params: idOnly },
      responses: {
        202: ok("the space is shutting down", z.object({ id: z.number().int(), shuttingDown: z.literal(true) })),
        ...errors(400, 404, 409, ...MUTATING_ERRORS),
      },
    }),
    getCellApp: createRoute({
      method: "get",
      path: "/api/cellapps/{id}",
      tags: ["cellapps"],
      summary: "A cellapp and its cells",
      request: { params: idOnly },
      responses: { 200: ok("the cellapp", cellAppSchema), ...errors(400, 404) },
    }),
    retireCellApp: createRoute({
      method: "post",
      path: "/api/cellapps/{id}/retire",
      tags: ["cellapps"],
      summary: "Drains a cellapp: its cells shrink to nothing and their entities move out",
      description: NEEDS_JSON.trim(),
      request: { params: idOnly },
      responses: { 202: ok("it is retiring", retireSchema), ...errors(400, 404, 409, ...MUTATING_ERRORS) },
    }),
    getCell: createRoute({
      method: "get",
      path: "/api/cellapps/{id}/cells/{spaceId}",
      tags: ["cellapps"],
      summary: "The entities, real and ghost, of the cell a cellapp runs in a space",
      request: {
        params: z.object({
          id: idParam.openapi({ param: { name: "id", in: "path" }, example: 1 }),
          spaceId: idParam.openapi({ param: { name: "spaceId", in: "path" }, example: 1 }),
        }),
      },
      responses: {
        200: ok("the cell's entities", z.object({ entities: z.array(cellEntitySchema) })),
        ...errors(400, 404, 503),
      },
    }),
    findEntity: createRoute({
      method: "get",
      path: "/api/entities/{id}",
      tags: ["entities"],
      summary:
        "Where an entity is (its space, position, cellapp, ghosts and base) and its cell properties with their flags",
      request: { params: idOnly },
      responses: { 200: ok("the entity", entitySchema), ...errors(400, 404, 409) },
    }),
    metrics: createRoute({
      method: "get",
      path: "/metrics",
      tags: ["metrics"],
      summary: "Prometheus metrics gathered from every process, labelled with its role and id",
      responses: {
        200: {
          description: "the Prometheus text format, version 0.0.4",
          content: { "text/plain": { schema: z.string() } },
        },
        ...errors(),
      },
    }),
    openapi: createRoute({
      method: "get",
      path: "/api/openapi.json",
      tags: ["docs"],
      summary: "This document: OpenAPI 3.0, generated from the route schemas",
      responses: {
        200: ok("the OpenAPI document", z.record(z.string(), z.unknown())),
        ...errors(),
      },
    }),
    watchTicket: createRoute({
      method: "post",
      path: "/api/watch/ticket",
      tags: ["watch"],
      summary: "A single-use ticket (valid 30 s) that opens the watch socket once",
      description: NEEDS_JSON.trim(),
      responses: {
        201: ok("the ticket", z.object({ ticket: z.string(), expiresInMs: z.number().int() })),
        ...errors(...MUTATING_ERRORS),
      },
    }),
    watch: createRoute({
      method: "get",
      path: "/api/watch",
      tags: ["watch"],
      summary: "The watch socket: a WebSocket of JSON messages by topic (cluster, space:ID, entity:ID)",
      description: "Opened with a ticket from POST /api/watch/ticket; no bearer token (a browser cannot send one).",
      request: {
        query: z.object({ ticket: z.string().optional().openapi({ param: { name: "ticket", in: "query" } }) }),
      },
      responses: {
        101: { description: "switched to the WebSocket protocol" },
        400: {
          description: "not a valid WebSocket handshake",
          content: { "application/json": { schema: errorSchema } },
        },
        401: { description: "no valid ticket", content: { "application/json": { schema: errorSchema } } },
        403: { description: ERROR_MEANING[403], content: { "application/json": { schema: errorSchema } } },
        426: {
          description: "a plain request: upgrade to WebSocket",
          content: { "application/json": { schema: errorSchema } },
        },
      },
    }),
    shutdownProcess: createRoute({
      method: "post",
      path: "/api/processes/{id}/shutdown",
      tags: ["cluster"],
      summary: "Stops one process: gracefully (a cellapp retires first), or at once with ?force=true",
      description: NEEDS_JSON.trim(),
      request: {
        params: idOnly,
        query: z.object({
          force: z.enum(["true", "false"]).optional().openapi({ param: { name: "force", in: "query" } }),
        }),
      },
      responses: {
        202: ok("it is stopping", processShutdownSchema),
        ...errors(400, 404, 409, ...MUTATING_ERRORS),
      },
    }),
    players: createRoute({
      method: "get",
      path: "/api/players",
      tags: ["players"],
      summary: "Who is online and where: account, entity, baseapp, space, position, connected or in its grace",
      description: "Each baseapp gets 1.5 s to answer; one that does not is named in `unanswered`. At most 5,000 " +
        "players are listed (`truncated` says when more are online).",
      responses: { 200: ok("the players by account name", playersSchema), ...errors() },
    }),
    kickPlayer: createRoute({
      method: "post",
      path: "/api/players/{name}/kick",
      tags: ["players"],
      summary: "Disconnects a player's client with a reason and logs the player out (saved, as at logout)",
      description: "The body is optional." + NEEDS_JSON,
      request: {
        params: z.object({ name: accountParam.openapi({ param: { name: "name", in: "path" }, example: "alice" }) }),
        body: { required: false, content: { "application/json": { schema: kickBodySchema } } },
      },
      responses: {
        200: ok("it is logged out and saved", kickSchema),
        ...errors(400, 404, 503, ...MUTATING_ERRORS),
      },
    }),
    dashboard: createRoute({
      method: "get",
      path: "/",
      tags: ["dashboard"],
      summary: "The operators' dashboard, drawn from the watch socket (no token needed for the page)",
      responses: { 200: { description: "an HTML page", content: { "text/html": { schema: z.string() } } } },
    }),
    dashboardScript: createRoute({
      method: "get",
      path: "/dashboard.js",
      tags: ["dashboard"],
      summary: "The dashboard's script",
      responses: { 200: { description: "JavaScript", content: { "text/javascript": { schema: z.string() } } } },
    }),
    dashboardDrawing: createRoute({
      method: "get",
      path: "/dashboard_draw.js",
      tags: ["dashboard"],
      summary: "The dashboard's drawing of a space",
      responses: { 200: { description: "JavaScript", content: { "text/javascript": { schema: z.string() } } } },
    }),
    docs: createRoute({
      method: "get",
      path: "/api/docs",
      tags: ["docs"],
      summary: "A reference page of these routes, drawn from /api/openapi.json (no token needed for the page)",
      responses: {
        200: { description: "an HTML page", content: { "text/html": { schema: z.string() } } },
        403: { description: ERROR_MEANING[403], content: { "application/json": { schema: errorSchema } } },
      },
    }),
  };
}
