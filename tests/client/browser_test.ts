/**
 * The SDK in a real browser: `deno task browser --example` bundles the example page (the SDK and the sample game's
 * definitions in one ES module), which headless Chromium opens against a running cluster: it logs in, walks, and
 * shows the entities around it, as an SDK client in Deno and the admin API confirm. Skipped, saying so, when no
 * Chromium is installed (`apt-get install chromium`; CHROMIUM_PATH names another).
 */
import assert from "node:assert/strict";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { connect } from "../../client/mod.ts";
import { registry } from "../../entities/mod.ts";
import { buildExample, bundle } from "../../tools/browser.ts";
import { Procs } from "../../testing/procs.ts";
import { cellReady, entityAt, seen, startBaseProcess, startCluster } from "../helpers/players.ts";
import { waitFor } from "../../testing/wait.ts";
import { findChromium } from "../helpers/chromium.ts";

const chromium = findChromium("browser_test");

/** Serves the files of `dir` on a free loopback port. */
function serveDir(dir: string): Deno.HttpServer<Deno.NetAddr> {
  const types: Record<string, string> = { html: "text/html", js: "text/javascript" };
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const name = new URL(req.url).pathname.replace(/^\/+/, "") || "index.html";
    if (!/^[\w.-]+$/.test(name)) return new Response("not found", { status: 404 });
    try {
      const body = await Deno.readFile(`${dir}/${name}`);
      return new Response(body, { headers: { "content-type": types[name.split(".").pop()!] ?? "text/plain" } });
    } catch {
      return new Response("not found", { status: 404 });
    }
  });
}

async function until(page: Page, what: string, expr: string, ms = 15_000): Promise<void> {
  try {
    await page.waitForFunction(expr, { timeout: ms });
  } catch (e) {
    const status = await page.evaluate(`document.getElementById("status")?.textContent`);
    throw new Error(`the page did not show ${what} within ${ms} ms (${expr}); status "${status}": ${e}`);
  }
}

Deno.test("deno task browser bundles the SDK as one ES module that a page imports", async () => {
  const dir = await Deno.makeTempDir({ prefix: "sdk_bundle_" });
  try {
    await bundle(new URL("../../client/browser.ts", import.meta.url).pathname, `${dir}/seamless.js`);
    const text = await Deno.readTextFile(`${dir}/seamless.js`);
    assert.ok(!/^\s*import\s/m.test(text) && !/\bfrom\s*["']npm:/.test(text), "nothing left to import");
    // Deno runs ES modules as a browser does: what a page would import is there.
    const sdk = await import(`file://${dir}/seamless.js`);
    for (
      const name of ["connect", "Client", "ClientWorld", "defineEntity", "createRegistry", "positionErrorBound"]
    ) {
      assert.equal(typeof sdk[name], "function", name);
    }
    assert.equal(typeof sdk.T.INT32, "object");
    const Ball = sdk.defineEntity({ name: "Ball", hasCell: true, hasClient: true, properties: {} });
    assert.equal(sdk.createRegistry({ entities: [Ball] }).get("Ball").name, "Ball");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "the example page in headless Chromium logs in, walks, and shows the entities around it",
  ignore: chromium === null,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using procs = new Procs();
    const dir = await Deno.makeTempDir({ prefix: "example_page_" });
    const server = serveDir(dir);
    let browser: Browser | null = null;
    try {
      const [cluster] = await Promise.all([startCluster(procs, { mgrFlags: ["--npcs=40"] }), buildExample(dir)]);
      const { clientUrl } = await startBaseProcess(procs, cluster, ["--max-speed=1000"]);
      const neighbour = await connect(
        clientUrl,
        { name: "neighbour", password: "pw", position: { x: 25, y: 0, z: 0 } },
        {
          registry,
        },
      );
      await cellReady(neighbour);

      browser = await puppeteer.launch({
        executablePath: chromium!,
        headless: true,
        pipe: true,
        args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
      });
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on("pageerror", (e) => problems.push(`page error: ${(e as Error).message}`));
      page.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
      const query = new URLSearchParams({ server: clientUrl, name: "webplayer", x: "0", z: "0" });
      await page.goto(`http://127.0.0.1:${server.addr.port}/index.html?${query}`, { waitUntil: "load" });
      await until(page, "that it plays", `document.body.dataset.state === "playing"`);
      const playerId = Number(await page.evaluate(`document.getElementById("player").textContent`));
      assert.ok(playerId > 0, "the page shows its player's id");

      // It shows the entities around it: the neighbour and the default space's NPCs within its AoI.
      await until(
        page,
        "the neighbour and NPCs",
        `(document.body.dataset.seen ?? "").split(",").includes("${neighbour.player.id}") &&
          document.querySelectorAll("#entities tr").length > 5`,
      );
      const rows = await page.evaluate(
        `[...document.querySelectorAll("#entities tr")].map((r) => [...r.children].map((c) => c.textContent))`,
      ) as string[][];
      const types = new Set(rows.map((r) => r[1]));
      assert.ok(types.has("NPC") && types.has("Avatar"), `types shown: ${[...types]}`);
      for (const [id, , x] of rows.slice(0, 5)) {
        const where = await entityAt(cluster.admin, Number(id));
        assert.ok(where, `entity ${id} the page shows exists`);
        assert.ok(Math.abs(where.position[0] - Number(x)) < 30, `entity ${id} near where the page draws it`);
      }

      // It walks: the server, and the neighbour's SDK client, see its player move.
      const seenByNeighbour = await seen(neighbour, playerId);
      const start = { ...seenByNeighbour.position };
      await waitFor("the page's player to walk 5 m", () => {
        const p = seenByNeighbour.position;
        return Math.hypot(p.x - start.x, p.z - start.z) > 5;
      }, 15_000);
      const onServer = await entityAt(cluster.admin, playerId);
      assert.ok(onServer && Math.hypot(onServer.position[0], onServer.position[2]) > 1, JSON.stringify(onServer));
      assert.deepEqual(problems, []);
      neighbour.close();
    } finally {
      await browser?.close();
      await server.shutdown();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
