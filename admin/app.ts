import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { zValidator } from "@hono/zod-validator";
import { z } from "zod";
import {
  type CellAppView,
  type CellEntityView,
  type ClusterView,
  type CreateSpaceBody,
  type EntityInspectView,
  type EntityView,
  type HealthView,
  type PatchSpaceBody,
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
import { WatchHub, type WatchOptions } from "./watch.ts";
import { dashboardRoutes } from "./dashboard.ts";

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
  /** An entity with its cell properties (the watch socket's `entity:ID`). */
  inspectEntity(id: number): Promise<EntityInspectView>;
  /** Calls `listener` after every process joins or leaves; returns what stops it. */
  onProcessChange(listener: (change: ProcessChange) => void): () => void;
  shutdownProcess(id: number, force: boolean): ProcessShutdownView;
}

/** How the admin app is set up. */
export interface AdminOptions {
  /** When set, every request needs `Authorization: Bearer <token>`. */
  token?: string | null;
  /** Entity type names a space may be spawned with. */
  entityTypes?: readonly string[];
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

/** Validation that answers with our error format, naming the field. */
function valid<T extends z.ZodType>(target: "json" | "param" | "query", schema: T) {
  return zValidator(target, schema, (result, c) => {
    if (!result.success) return errorResponse(c, 400, "bad_request", describeIssues(result.error));
  });
}

const id = z.coerce.number().int().min(1).max(2 ** 53);
const idParam = z.object({ id });
const cellParam = z.object({ id, spaceId: id });

/**
 * Builds the admin API (Hono) over a backend. Throws, naming the flag, for a
 * `hosts` or `origins` entry that is not a host name or an origin.
 */
export function createAdminApp(backend: AdminBackend, opts: AdminOptions = {}): Hono {
  const app = new Hono();
  const token = opts.token ?? null;
  const types = opts.entityTypes ?? null;
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

  const coord = z.number().finite().min(-1e7).max(1e7);
  const spawnEntry = z.strictObject({
    type: z.string().refine((t) => types === null || types.includes(t), {
      message: `unknown entity type; known types: ${types?.join(", ")}`,
    }),
    count: z.number().int().min(1).max(100_000),
    props: z.record(z.string(), z.unknown()).optional(),
  });
  const spawnInto = z.strictObject({
    entities: z.array(spawnEntry.extend({ position: z.tuple([coord, coord, coord]).optional() })).min(1).max(32),
  });
  const createSpace = z.strictObject({
    bounds: z.tuple([coord, coord, coord, coord]).refine(
      ([minX, minZ, maxX, maxZ]) => minX < maxX && minZ < maxZ,
      "must be [minX, minZ, maxX, maxZ] with min < max",
    ),
    cells: z.number().int().min(1).max(64).optional(),
    entities: z.array(spawnEntry).max(32).optional(),
    balance: z.boolean().optional(),
  });
  const patchSpace = z.strictObject({ balance: z.boolean().optional() });

  // Host before anything else: a rebound page must learn nothing, not even whether a token is needed.
  app.use("*", hostGuard(hosts));
  app.use("*", corsGuard(origins));
  // Neither needs the bearer token: the page holds no data (it asks for the token), the socket checks its ticket.
  const watch = opts.watch instanceof WatchHub ? opts.watch : new WatchHub(backend, opts.watch);
  app.route("/", dashboardRoutes());
  app.get("/api/watch", originGuard(origins), watch.handler);
  if (token !== null) {
    const expected = new TextEncoder().encode(`Bearer ${token}`);
    app.use("*", async (c, next) => {
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

  app.post("/api/watch/ticket", (c) => c.json(watch.issueTicket(), 201));
  app.post(
    "/api/processes/:id/shutdown",
    valid("param", idParam),
    valid("query", z.object({ force: z.enum(["true", "false"]).optional() })),
    (c) => c.json(backend.shutdownProcess(c.req.valid("param").id, c.req.valid("query").force === "true"), 202),
  );
  app.get("/api/health", (c) => c.json(backend.health()));
  app.get("/api/cluster", (c) => c.json(backend.cluster()));
  app.post("/api/shutdown", (c) => c.json(backend.shutdownCluster(), 202));

  app.get("/api/spaces", (c) => c.json({ spaces: backend.listSpaces() }));
  app.post(
    "/api/spaces",
    valid("json", createSpace),
    async (c) => c.json(await backend.createSpace(c.req.valid("json")), 201),
  );
  app.get("/api/spaces/:id", valid("param", idParam), (c) => c.json(backend.getSpace(c.req.valid("param").id)));
  app.post(
    "/api/spaces/:id/entities",
    valid("param", idParam),
    valid("json", spawnInto),
    async (c) => c.json(await backend.spawnInto(c.req.valid("param").id, c.req.valid("json")), 201),
  );
  app.patch(
    "/api/spaces/:id",
    valid("param", idParam),
    valid("json", patchSpace),
    (c) => c.json(backend.patchSpace(c.req.valid("param").id, c.req.valid("json"))),
  );
  app.delete(
    "/api/spaces/:id",
    valid("param", idParam),
    (c) => c.json(backend.deleteSpace(c.req.valid("param").id), 202),
  );
  app.get("/api/cellapps/:id", valid("param", idParam), (c) => c.json(backend.getCellApp(c.req.valid("param").id)));
  app.post(
    "/api/cellapps/:id/retire",
    valid("param", idParam),
    (c) => c.json(backend.retireCellApp(c.req.valid("param").id), 202),
  );
  app.get("/api/cellapps/:id/cells/:spaceId", valid("param", cellParam), async (c) => {
    const p = c.req.valid("param");
    return c.json({ entities: await backend.getCell(p.id, p.spaceId) });
  });
  app.get(
    "/api/entities/:id",
    valid("param", idParam),
    async (c) => c.json(await backend.findEntity(c.req.valid("param").id)),
  );

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

/** Constant-time comparison, so a token cannot be guessed byte by byte from timings. */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < b.length; i++) diff |= (a[i] ?? 0) ^ b[i];
  return diff === 0;
}
