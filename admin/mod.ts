/** The admin API (Hono), served by the cellappmgr. */
export { type AdminBackend, type AdminOptions, createAdminApp, errorResponse } from "./app.ts";
