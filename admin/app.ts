import { Hono } from "hono";
import type { Context } from "hono";
import type { ClusterView, HealthView, ShutdownView } from "../core/views.ts";

/** What the admin API needs from the cellappmgr; the mgr passes itself. */
export interface AdminBackend {
  health(): HealthView;
  cluster(): ClusterView;
  shutdownCluster(): ShutdownView;
}

/** How the admin app is set up. */
export interface AdminOptions {
  /** When set, every request needs `Authorization: Bearer <token>`. */
  token?: string | null;
}

/** An admin API error: `{"error": {"code", "message"}}` with an HTTP status. */
export class ApiError extends Error {
  constructor(
    readonly status: 400 | 401 | 404 | 409 | 500 | 503,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Sends the error body every admin route uses. */
export function errorResponse(
  c: Context,
  status: ApiError["status"],
  code: string,
  message: string,
): Response {
  return c.json({ error: { code, message } }, status);
}

/** Builds the admin API (Hono) over a backend. */
export function createAdminApp(
  backend: AdminBackend,
  opts: AdminOptions = {},
): Hono {
  const app = new Hono();
  const token = opts.token ?? null;

  if (token !== null) {
    const expected = new TextEncoder().encode(`Bearer ${token}`);
    app.use("*", async (c, next) => {
      const got = c.req.header("authorization");
      if (!got) {
        c.header("WWW-Authenticate", 'Bearer realm="seamless"');
        return errorResponse(
          c,
          401,
          "unauthorized",
          "this API requires an Authorization: Bearer token",
        );
      }
      if (!sameBytes(new TextEncoder().encode(got), expected)) {
        c.header(
          "WWW-Authenticate",
          'Bearer realm="seamless", error="invalid_token"',
        );
        return errorResponse(
          c,
          401,
          "unauthorized",
          "the bearer token is not valid",
        );
      }
      await next();
    });
  }

  app.get("/api/health", (c) => c.json(backend.health()));
  app.get("/api/cluster", (c) => c.json(backend.cluster()));
  app.post("/api/shutdown", (c) => c.json(backend.shutdownCluster(), 202));

  app.notFound((c) =>
    errorResponse(
      c,
      404,
      "not_found",
      `no route ${c.req.method} ${new URL(c.req.url).pathname}`,
    )
  );
  app.onError((err, c) => {
    if (err instanceof ApiError) {
      return errorResponse(c, err.status, err.code, err.message);
    }
    console.error(
      `admin API: ${c.req.method} ${c.req.url} failed: ${err.stack ?? err.message}`,
    );
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
