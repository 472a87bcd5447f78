import { HTTPException } from "hono/http-exception";
import { OpenAPIHono } from "@hono/zod-openapi";
import {
  type CellAppView,
  type CellEntityView,
  type ClusterView,
  type CreateSpaceBody,
  type EntityInspectView,
  type EntityView,
  type GameReloadView,
  type HealthView,
  type KickView,
  type PatchSpaceBody,
  type PlayersView,
  type ProcessChange,
  type ProcessShutdownView,
  RequestError,
  type RetireView,
  type ShutdownView,
  type SpaceSummaryView,
  type SpaceView,
  type SpawnBody,
} from "../core/views.ts";
import { errorResponse, type Status } from "./errors.ts";
import { allowedHostNames, bodyGuard, corsGuard, hostGuard, jsonGuard, originGuard, originOf } from "./guard.ts";
import { bodySchemas } from "./schemas.ts";
import { adminRoutes } from "./routes.ts";
import { DOCS_PAGE } from "./docs_page.ts";
import { WatchHub, type WatchOptions } from "./watch.ts";
import { dashboardResponse } from "./dashboard.ts";

/** What the admin API needs from the cellappmgr; the mgr passes itself. */
export interface AdminBackend {
  health(): HealthView;
  cluster(): ClusterView;
  shutdownCluster(): ShutdownView;
  listSpaces(): SpaceSummaryView[];
  getSpace(id: number): SpaceView;
  patchSpace(id: number, body: PatchSpaceBody): SpaceView;
  retireCellApp(id: number): RetireView;
  spawnInto(id: number, body: SpawnBody): Promise<{ spawned: number }>;
  createSpace(body: CreateSpaceBody): Promise<{ id: number }>;
  deleteSpace(id: number): { id: number; shuttingDown: true };
  getCellApp(id: number): CellAppView;
  getCell(cellappId: number, spaceId: number): Promise<CellEntityView[]>;
  findEntity(id: number): Promise<EntityView>;
  /** POST /api/game/reload; without it the route answers 503. */
  reloadGame?(): Promise<GameReloadView>;
  /** GET /metrics: Prometheus text gathered from every process; without it /metrics answers 503. */
  metrics?(): Promise<string>;
  /** An entity with its cell properties (the watch socket's `entity:ID`). */
  inspectEntity(id: number): Promise<EntityInspectView>;
  /** Calls `listener` after every process joins or leaves; returns what stops it. */
  onProcessChange(listener: (change: ProcessChange) => void): () => void;
  /** POST /api/processes/:id/shutdown. */
  shutdownProcess(id: number, force: boolean): ProcessShutdownView;
  /** GET /api/players: asks every baseapp, each within its own time. */
  players(): Promise<PlayersView>;
  /** POST /api/players/:name/kick: resolves once the player is saved; 404 when nobody is online as `name`. */
  kickPlayer(name: string, reason: string): Promise<KickView>;
}

/** How the admin app is set up. */
export interface AdminOptions {
  /** When set, every request needs `Authorization: Bearer <token>`. */
  token?: string | null;
  /** Entity type names a space may be spawned with, as the game has them now (a reload may add some). */
  entityTypes?: () => readonly string[];
  /** Origins (`--admin-origins`) besides the API's own that web pages may call it from, with CORS. */
  origins?: readonly string[];
  /** Host names (`--admin-hosts`) accepted besides the loopback names and the bound address. */
  hosts?: readonly string[];
  /**
   * The address the server is bound to (`--host`): accepted as a Host name, and
   * when it is a wildcard (0.0.0.0, ::) so are the machine's interface addresses.
   */
  boundHost?: string | null;
  /** The machine's addresses for a wildcard `boundHost`; defaults to Deno.networkInterfaces(). */
  interfaces?: () => readonly string[];
  /** The watch socket (GET /api/watch): its bounds, or a hub the caller made (and closes). */
  watch?: WatchOptions | WatchHub;
}

/** The Prometheus text exposition format's media type. */
const PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

/** Largest request body, counted as it arrives (chunked bodies carry no Content-Length). */
export const MAX_BODY_BYTES = 1024 * 1024;

const STATUS_OF: Record<RequestError["code"], Status> = {
  bad_request: 400,
  not_found: 404,
  conflict: 409,
  unavailable: 503,
};

/** Turns zod's issues into one line that names each field. */
function describeIssues(error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] }): string {
  return error.issues.map((i) => `${i.path.length ? i.path.map(String).join(".") : "body"}: ${i.message}`).join("; ");
}

/**
 * Builds the admin API (Hono) over a backend. Throws, naming the flag, for a
 * `hosts` or `origins` entry that is not a host name or an origin.
 */
export function createAdminApp(backend: AdminBackend, opts: AdminOptions = {}): OpenAPIHono {
  // A request that fails its schema gets our error body, naming the field.
  const app = new OpenAPIHono({
    defaultHook: (result, c) => {
      if (!result.success) return errorResponse(c, 400, "bad_request", describeIssues(result.error));
    },
  });
  const token = opts.token ?? null;
  const hosts = allowedHostNames({
    boundHost: opts.boundHost ?? null,
    extra: opts.hosts ?? [],
    interfaces: opts.interfaces,
  });
  const origins = new Set((opts.origins ?? []).map((o) => {
    const origin = originOf(o);
    if (origin === null) {
      throw new Error(`--admin-origins: ${JSON.stringify(o)} is not an origin like https://ops.example`);
    }
    return origin;
  }));

  // Host before anything else: a rebound page must learn nothing, not even whether a token is needed.
  app.use("*", hostGuard(hosts));
  app.use("*", corsGuard(origins));
  const r = adminRoutes(bodySchemas(opts.entityTypes ?? null));
  // Neither needs the bearer token: the page holds no data (it asks for the token), the socket checks its ticket.
  const watch = opts.watch instanceof WatchHub ? opts.watch : new WatchHub(backend, opts.watch);
  app.openapi(r.dashboard, () => dashboardResponse("page"));
  app.openapi(r.dashboardScript, () => dashboardResponse("script"));
  app.openapi(r.dashboardDrawing, () => dashboardResponse("drawing"));
  app.use("/api/watch", originGuard(origins));
  app.openapi(r.watch, watch.handler);
  if (token !== null) {
    const expected = new TextEncoder().encode(`Bearer ${token}`);
    app.use("*", async (c, next) => {
      // The reference page is static and a browser cannot send the token for it; it asks for the token itself.
      if (c.req.method === "GET" && c.req.path === "/api/docs") return await next();
      const got = c.req.header("authorization");
      if (!got) {
        c.header("WWW-Authenticate", 'Bearer realm="seamless"');
        return errorResponse(c, 401, "unauthorized", "this API requires an Authorization: Bearer token");
      }
      if (!sameBytes(new TextEncoder().encode(got), expected)) {
        c.header("WWW-Authenticate", 'Bearer realm="seamless", error="invalid_token"');
        return errorResponse(c, 401, "unauthorized", "the bearer token is not valid");
      }
      await next();
    });
  }
  app.use("*", originGuard(origins));
  app.use("*", jsonGuard());
  app.use(
    "*",
    bodyGuard(MAX_BODY_BYTES, (c) => errorResponse(c, 413, "too_large", "request bodies are limited to 1 MiB")),
  );

  app.openapi(r.watchTicket, (c) => c.json(watch.issueTicket(), 201));
  app.openapi(
    r.shutdownProcess,
    (c) => c.json(backend.shutdownProcess(c.req.valid("param").id, c.req.valid("query").force === "true"), 202),
  );
  app.openapi(r.players, async (c) => c.json(await backend.players(), 200));
  // Its body is optional, and an empty one comes with Content-Type: application/json (jsonGuard): it reads as {},
  // rebuilt as bodyGuard rebuilds a request, so that the validator parses that.
  app.use("/api/players/:name/kick", async (c, next) => {
    const raw = c.req.raw;
    const text = await raw.clone().text();
    if (text.trim() === "") {
      c.req.raw = new Request(c.req.url, { method: raw.method, headers: raw.headers, body: "{}" });
    }
    await next();
  });
  app.openapi(r.kickPlayer, async (c) => {
    const reason = c.req.valid("json")?.reason ?? "kicked by an operator";
    return c.json(await backend.kickPlayer(c.req.valid("param").name, reason), 200);
  });
  app.openapi(r.health, (c) => c.json(backend.health(), 200));
  app.openapi(r.cluster, (c) => c.json(backend.cluster(), 200));
  app.openapi(r.shutdown, (c) => c.json(backend.shutdownCluster(), 202));
  app.openapi(r.reloadGame, async (c) => {
    if (!backend.reloadGame) throw new RequestError("unavailable", "this admin API reloads no game");
    return c.json(await backend.reloadGame(), 200);
  });
  app.openapi(r.listSpaces, (c) => c.json({ spaces: backend.listSpaces() }, 200));
  app.openapi(r.createSpace, async (c) => c.json(await backend.createSpace(c.req.valid("json")), 201));
  app.openapi(r.getSpace, (c) => c.json(backend.getSpace(c.req.valid("param").id), 200));
  app.openapi(
    r.spawnInto,
    async (c) => c.json(await backend.spawnInto(c.req.valid("param").id, c.req.valid("json")), 201),
  );
  app.openapi(r.patchSpace, (c) => c.json(backend.patchSpace(c.req.valid("param").id, c.req.valid("json")), 200));
  app.openapi(r.deleteSpace, (c) => c.json(backend.deleteSpace(c.req.valid("param").id), 202));
  app.openapi(r.getCellApp, (c) => c.json(backend.getCellApp(c.req.valid("param").id), 200));
  app.openapi(r.retireCellApp, (c) => c.json(backend.retireCellApp(c.req.valid("param").id), 202));
  app.openapi(r.getCell, async (c) => {
    const p = c.req.valid("param");
    return c.json({ entities: await backend.getCell(p.id, p.spaceId) }, 200);
  });
  app.openapi(r.findEntity, async (c) => c.json(await inspectWithRetry(backend, c.req.valid("param").id), 200));
  app.openapi(r.metrics, async (c) => {
    if (!backend.metrics) throw new RequestError("unavailable", "this admin API gathers no metrics");
    return c.body(await backend.metrics(), 200, { "content-type": PROMETHEUS_TEXT });
  });
  let spec: unknown = null;
  app.openapi(r.openapi, (c) => {
    spec ??= app.getOpenAPIDocument({
      openapi: "3.0.3",
      info: {
        title: "seamless admin API",
        version: "1",
        description: "Operates a seamless-world cluster through its cellappmgr. Errors are " +
          '`{"error": {"code", "message"}}`; a bearer token is needed when one is configured.',
      },
      security: token === null ? [] : [{ bearer: [] }],
    });
    return c.json(spec as Record<string, unknown>, 200);
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "bearer", { type: "http", scheme: "bearer" });
  app.openapi(r.docs, (c) => c.html(DOCS_PAGE, 200));

  app.notFound((c) => errorResponse(c, 404, "not_found", `no route ${c.req.method} ${new URL(c.req.url).pathname}`));
  app.onError((err, c) => {
    if (err instanceof RequestError) return errorResponse(c, STATUS_OF[err.code], err.code, err.message);
    if (err instanceof HTTPException && err.status < 500) {
      return errorResponse(c, err.status as Status, "bad_request", err.message);
    }
    // The client went away mid-body (or was cut off for sending it too slowly): nobody reads this, nothing broke.
    if ((err as { code?: string }).code === "ECONNRESET") {
      return errorResponse(c, 400, "bad_request", "the connection closed before the whole request arrived");
    }
    console.error(`admin API: ${c.req.method} ${c.req.url} failed: ${err.stack ?? err.message}`);
    return errorResponse(c, 500, "internal", err.message);
  });
  return app;
}

/** An entity with its properties; one that moved between the two questions is asked about once more. */
async function inspectWithRetry(backend: AdminBackend, id: number): Promise<EntityInspectView> {
  try {
    return await backend.inspectEntity(id);
  } catch (e) {
    if (!(e instanceof RequestError) || e.code !== "conflict") throw e;
    return await backend.inspectEntity(id);
  }
}

/** Constant-time comparison, so a token cannot be guessed byte by byte from timings. */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < b.length; i++) diff |= (a[i] ?? 0) ^ b[i];
  return diff === 0;
}
