/**
 * `deno task demo [--http-port=N]`: the playable demo (docs/demo.md). Bundles the page (tools/browser.ts), starts a
 * local cluster running the demo game (demo/mod.ts, given as `--game`) with an admin token of its own, makes the
 * demo's space cut into cells over both cellapps, and serves the page. Ctrl-C stops it all.
 *
 * Prints `{"demo": {"url", "admin", "spaceId", "server"}}` on stdout once the page can be opened.
 */
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { runServer } from "../mod.ts";
import { bundle } from "../tools/browser.ts";
import { type PageConfig, servePage } from "./page_server.ts";

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

/** The demo space: its bounds `[minX, minZ, maxX, maxZ]` and its cells. */
const BOUNDS: [number, number, number, number] = [0, 0, 240, 240];
const CELLS = 4;

const { values } = parseArgs({
  args: Deno.args,
  options: { "http-port": { type: "string", default: "8000" } },
});
const httpPort = Number(values["http-port"]);
if (!Number.isInteger(httpPort) || httpPort < 0 || httpPort > 65535) {
  console.error(`error: --http-port: ${values["http-port"]} is not a port (0-65535)`);
  Deno.exit(2);
}

/** A free loopback port for the admin API, so that the demo knows where it is. */
function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = l.addr.port;
  l.close();
  return port;
}

/** An admin request with the demo's token; throws with the route and the answer when it fails. */
async function admin<T>(base: string, token: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

/** Waits until `fn` resolves, retrying every 250 ms for at most `ms`. */
async function retry<T>(what: string, ms: number, fn: () => Promise<T>): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      if (Date.now() > until) throw new Error(`${what} within ${ms} ms: ${(e as Error).message}`, { cause: e });
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

const token = crypto.randomUUID();
const adminUrl = `http://127.0.0.1:${freePort()}`;
const bundleDir = here("../dist/demo/");
const built = bundle(here("./app.ts"), `${bundleDir}app.js`);

// The cluster's children get the token from the environment (cli/local_cluster.ts childEnv), never a command line.
Deno.env.set("SEAMLESS_ADMIN_TOKEN", token);
runServer({
  game: new URL("./mod.ts", import.meta.url),
  args: [
    `--admin-port=${new URL(adminUrl).port}`,
    "--port=0",
    "--kv=:memory:",
    "--npcs=0",
    "--aoi-radius=100",
    // Partitions hold still: the borders the page draws stay where they are.
    "--balance-period=0",
  ],
});

try {
  await built;
  type Proc = { role: string; clientUrl?: string };
  const clientUrl = await retry("a baseapp", 60_000, async () => {
    const { processes } = await admin<{ processes: Proc[] }>(adminUrl, token, "GET", "/api/cluster");
    const cellapps = processes.filter((p) => p.role === "cellapp").length;
    const url = processes.find((p) => p.role === "baseapp" && p.clientUrl)?.clientUrl;
    if (!url || cellapps < 2) throw new Error(`${cellapps} cellapps, baseapp ${url ?? "not there"}`);
    return url;
  });
  const { id: spaceId } = await admin<{ id: number }>(adminUrl, token, "POST", "/api/spaces", {
    bounds: BOUNDS,
    cells: CELLS,
  });
  const config: PageConfig = { server: clientUrl, spaceId, bounds: BOUNDS };
  const server = servePage({
    hostname: "127.0.0.1",
    port: httpPort,
    webDir: here("./web/"),
    bundleDir,
    config,
    admin: adminUrl,
    adminToken: token,
  });
  const url = `http://127.0.0.1:${server.addr.port}/`;
  console.error(`demo: open ${url} (two tabs, two names) — Ctrl-C stops it`);
  console.log(JSON.stringify({ demo: { url, admin: adminUrl, spaceId, server: clientUrl } }));
} catch (e) {
  // The cluster's processes watch this one's end of their stdin (core/process.ts watchParent): they stop with it.
  console.error(`error: demo: ${(e as Error).message}`);
  Deno.exit(1);
}
