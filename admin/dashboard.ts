/**
 * The operators' dashboard at `GET /`: one static page and its script, no
 * build step, drawing the cluster from the watch socket (`/api/watch`) and
 * acting through the REST routes. The page holds no data, so it is served
 * without the bearer token; it asks for the token (or takes `#token=` from
 * its URL) and sends it with every call.
 */
import { Hono } from "hono";
import page from "./dashboard.html" with { type: "text" };
import script from "./dashboard.js" with { type: "text" };
import drawing from "./dashboard_draw.js" with { type: "text" };

/** Same-origin only: the page's script, its calls and its socket; and no framing (its buttons stop processes). */
const CSP = "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; " +
  "img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** The routes serving the dashboard: `GET /`, `GET /dashboard.js` and `GET /dashboard_draw.js`. */
export function dashboardRoutes(): Hono {
  const app = new Hono();
  const headers = { "Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Cache-Control": "no-cache" };
  app.get("/", (c) => c.body(page, 200, { ...headers, "Content-Type": "text/html; charset=utf-8" }));
  const js = { ...headers, "Content-Type": "text/javascript; charset=utf-8" };
  app.get("/dashboard.js", (c) => c.body(script, 200, js));
  app.get("/dashboard_draw.js", (c) => c.body(drawing, 200, js));
  return app;
}
