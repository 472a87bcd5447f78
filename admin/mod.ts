/** The admin API (Hono), served by the cellappmgr. */
export { type AdminBackend, type AdminOptions, createAdminApp, MAX_BODY_BYTES } from "./app.ts";
export { errorResponse } from "./errors.ts";
export { type AdminServer, serveAdmin, type ServeOptions } from "./serve.ts";
