import { Hono } from "hono";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { zValidator } from "@hono/zod-validator";
import { z } from "zod";
import {
  type CellAppView,
  type CellEntityView,
  type ClusterView,
  type CreateSpaceBody,
  type EntityView,
  type HealthView,
  RequestError,
  type ShutdownView,
  type SpaceSummaryView,
  type SpaceView,
} from "../core/views.ts";

/** What the admin API needs from the cellappmgr; the mgr passes itself. */
export interface AdminBackend {
  health(): HealthView;
  cluster(): ClusterView;
  shutdownCluster(): ShutdownView;
  listSpaces(): SpaceSummaryView[];
  getSpace(id: number): SpaceView;
  createSpace(body: CreateSpaceBody): Promise<{ id: number }>;
  deleteSpace(id: number): { id: number; shuttingDown: true };
  getCellApp(id: number): CellAppView;
  getCell(cellappId: number, spaceId: number): Promise<CellEntityView[]>;
  findEntity(id: number): Promise<EntityView>;
}

/** How the admin app is set up. */
export interface AdminOptions {
  /** When set, every request needs `Authorization: Bearer <token>`. */
  token?: string | null;
  /** Entity type names a space may be spawned with. */
  entityTypes?: readonly string[];
}

type Status = 400 | 401 | 404 | 409 | 413 | 500 | 503;

/** Sends the error body every admin route uses. */
export function errorResponse(c: Context, status: Status, code: string, message: string): Response {
  return c.json({ error: { code, message } }, status);
}

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
function valid<T extends z.ZodType>(target: "json" | "param", schema: T) {
  return zValidator(target, schema, (result, c) => {
    if (!result.success) return errorResponse(c, 400, "bad_request", describeIssues(result.error));
  });
}

const id = z.coerce.number().int().min(1).max(2 ** 53);
const idParam = z.object({ id });
const cellParam = z.object({ id, spaceId: id });

/** Builds the admin API (Hono) over a backend. */
export function createAdminApp(backend: AdminBackend, opts: AdminOptions = {}): Hono {
  const app = new Hono();
  const token = opts.token ?? null;
  const types = opts.entityTypes ?? null;

  const coord = z.number().finite().min(-1e7).max(1e7);
  const createSpace = z.strictObject({
    bounds: z.tuple([coord, coord, coord, coord]).refine(
      ([minX, minZ, maxX, maxZ]) => minX < maxX && minZ < maxZ,
      "must be [minX, minZ, maxX, maxZ] with min < max",
    ),
    cells: z.number().int().min(1).max(64).optional(),
    entities: z.array(z.strictObject({
      type: z.string().refine((t) => types === null || types.includes(t), {
        message: `unknown entity type; known types: ${types?.join(", ")}`,
      }),
      count: z.number().int().min(1).max(100_000),
      props: z.record(z.string(), z.unknown()).optional(),
    })).max(32).optional(),
  });

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
  app.use("/api/*", async (c, next) => {
    const length = Number(c.req.header("content-length") ?? 0);
    if (length > 1024 * 1024) return errorResponse(c, 413, "too_large", "request bodies are limited to 1 MiB");
    const type = c.req.header("content-type") ?? "";
    if (length > 0 && !/^application\/json\b/i.test(type)) {
      return errorResponse(
        c,
        400,
        "bad_request",
        `the body must be JSON sent with Content-Type: application/json (got "${type}")`,
      );
    }
    await next();
  });

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
  app.delete(
    "/api/spaces/:id",
    valid("param", idParam),
    (c) => c.json(backend.deleteSpace(c.req.valid("param").id), 202),
  );
  app.get("/api/cellapps/:id", valid("param", idParam), (c) => c.json(backend.getCellApp(c.req.valid("param").id)));
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
