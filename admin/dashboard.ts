/**
 * The operators' dashboard at `GET /`: one static page and its script, no
 * build step, drawing the cluster from the watch socket (`/api/watch`) and
 * acting through the REST routes. The page holds no data, so it is served
 * without the bearer token; it asks for the token (or takes `#token=` from
 * its URL) and sends it with every call.
 */
import page from "./dashboard.html" with { type: "text" };
import script from "./dashboard.js" with { type: "text" };
import drawing from "./dashboard_draw.js" with { type: "text" };

/** Same-origin only: the page's script, its calls and its socket; and no framing (its buttons stop processes). */
const CSP = "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; " +
  "img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

const HEADERS = { "Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Cache-Control": "no-cache" };
const ASSETS = {
  page: { body: page, type: "text/html; charset=utf-8" },
  script: { body: script, type: "text/javascript; charset=utf-8" },
  drawing: { body: drawing, type: "text/javascript; charset=utf-8" },
};

/** One of the dashboard's files (`GET /`, `GET /dashboard.js`, `GET /dashboard_draw.js`) with its headers. */
export function dashboardResponse(which: keyof typeof ASSETS): Response {
  const a = ASSETS[which];
  return new Response(a.body, { status: 200, headers: { ...HEADERS, "Content-Type": a.type } });
}
