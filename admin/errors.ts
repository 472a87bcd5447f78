import type { Context } from "hono";

/** The statuses the admin API answers errors with. */
export type Status = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 500 | 503;

/** Sends the error body every admin route uses. */
export function errorResponse(c: Context, status: Status, code: string, message: string): Response {
  return c.json({ error: { code, message } }, status);
}

/** The same error body for code that has no Hono context (the HTTP server's own errors). */
export function errorBody(status: Status, code: string, message: string): Response {
  return Response.json({ error: { code, message } }, { status });
}
