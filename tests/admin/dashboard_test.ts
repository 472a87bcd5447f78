/**
 * The dashboard in a real headless Chromium against a running cluster: what
 * it draws matches the REST API, a click on an entity shows its properties
 * live, and its buttons spawn, create and delete. Skipped, saying so, when no
 * Chromium is installed (`apt-get install chromium`; CHROMIUM_PATH names another).
 */
import assert from "node:assert/strict";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import type { ClusterView, EntityView, SpaceSummaryView, SpaceView } from "../../core/views.ts";
import { api, Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";
import { findChromium } from "../helpers/chromium.ts";

const chromium = findChromium("dashboard_test");

const TOKEN = "dash-t0ken";
const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };

/** What the page's canvas says it drew. */
interface Drawn {
  space: string;
  cells: number;
  entities: number;
  ghosts: number;
}

/** Runs `expr` in the page (as text: the page's DOM types are not this program's). */
async function js<T>(page: Page, expr: string): Promise<T> {
  return await page.evaluate(expr) as T;
}

/** Waits until `expr` is true in the page. */
async function until(page: Page, what: string, expr: string, ms = 10_000): Promise<void> {
  try {
    await page.waitForFunction(expr, { timeout: ms });
  } catch (e) {
    throw new Error(`the dashboard did not show ${what} within ${ms} ms (${expr}): ${(e as Error).message}`);
  }
}

function drawn(page: Page): Promise<Drawn> {
  return js(
    page,
    `(() => { const d = document.getElementById("world").dataset;
      return { space: d.space, cells: Number(d.cells), entities: Number(d.entities), ghosts: Number(d.ghosts) }; })()`,
  );
}

async function spaceOf(admin: string, id: number): Promise<SpaceView> {
  return (await api(admin, `/api/spaces/${id}`, { headers: auth })).body as SpaceView;
}

function realsOf(s: SpaceView): number {
  return s.cells.reduce((n, c) => n + c.reals, 0);
}

Deno.test({
  name: "dashboard: draws the cluster as the REST API sees it, watches a clicked entity, and acts",
  ignore: chromium === null,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using procs = new Procs();
    const mgr = await procs.start(["--role=mgr", "--port=0", "--admin-port=0", "--npcs=50"], {
      env: { SEAMLESS_ADMIN_TOKEN: TOKEN },
    });
    const admin = mgr.ready.admin!;
    await procs.start(["--role=cell", "--port=0", `--mgr=${mgr.ready.address}`]);
    await procs.start(["--role=cell", "--port=0", `--mgr=${mgr.ready.address}`]);
    await waitFor(
      "the default space",
      async () => (await api(admin, "/api/spaces/1", { headers: auth })).status === 200,
      30_000,
    );
    const made = await api(admin, "/api/spaces", {
      method: "POST",
      headers: auth,
      body: JSON.stringify({
        bounds: [0, 0, 1000, 1000],
        cells: 2,
        balance: false,
        entities: [{ type: "NPC", count: 300, props: { wanderRadius: 12 } }],
      }),
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const spaceId = (made.body as { id: number }).id;
    await waitFor("the space's NPCs", async () => realsOf(await spaceOf(admin, spaceId)) === 300, 30_000);

    let browser: Browser | null = null;
    try {
      browser = await puppeteer.launch({
        executablePath: chromium!,
        headless: true,
        pipe: true,
        args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
        defaultViewport: { width: 1400, height: 1000 },
      });
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on("pageerror", (e) => problems.push(`page error: ${(e as Error).message}`));
      page.on("console", (m) => {
        if (m.type() === "error") problems.push(`console: ${m.text()}`);
      });
      page.on("dialog", (d) => void d.accept());
      // The token rides in the fragment, which is never sent to the server; the page keeps it for its calls.
      await page.goto(`${admin}/#token=${TOKEN}`, { waitUntil: "load" });
      await until(page, "that it is live", `document.getElementById("status").textContent === "live"`, 15_000);

      // The process table lists every process, with loads and heartbeats.
      const cluster = (await api(admin, "/api/cluster", { headers: auth })).body as ClusterView;
      await until(
        page,
        `${cluster.processes.length} processes`,
        `document.querySelectorAll("#processes tbody tr").length === ${cluster.processes.length}`,
      );
      const roles = await js<string[]>(
        page,
        `[...document.querySelectorAll("#processes tbody tr")].map((r) => r.children[1].textContent)`,
      );
      assert.deepEqual(roles, cluster.processes.map((p) => p.role));

      // The space: its cells and entities as drawn, against the REST API.
      await until(page, `space ${spaceId} in the list`, `document.querySelector('#space option[value="${spaceId}"]')`);
      await page.select("#space", String(spaceId));
      await until(
        page,
        `space ${spaceId} with its entities`,
        `document.getElementById("world").dataset.space === "${spaceId}" && ` +
          `Number(document.getElementById("world").dataset.entities) > 0`,
      );
      const rest = await spaceOf(admin, spaceId);
      const shown = await drawn(page);
      assert.equal(shown.cells, rest.cells.length);
      assert.ok(
        Math.abs(shown.entities - realsOf(rest)) <= 5,
        `drew ${shown.entities} entities; the REST API counts ${realsOf(rest)}`,
      );

      // A click on an entity's dot watches it: its properties, with their flags, live.
      const target = await js<{ id: number; at: [number, number] }>(
        page,
        `(() => { const id = dashboard.drawn.points[0][0]; return { id, at: dashboard.pagePointOf(id) }; })()`,
      );
      await page.mouse.click(target.at[0], target.at[1]);
      await until(
        page,
        "the entity's properties",
        `document.querySelector('#entity-props tr[data-name="wanderRadius"]')`,
      );
      const watched = Number(await js<string>(page, `document.getElementById("entity").dataset.id`));
      const where = (await api(admin, `/api/entities/${watched}`, { headers: auth })).body as EntityView;
      assert.equal(where.spaceId, spaceId, `entity ${watched} (clicked at ${target.id}) is in the space`);
      const radius = await js<string[]>(
        page,
        `[...document.querySelector('#entity-props tr[data-name="wanderRadius"]').children].map((td) => td.textContent)`,
      );
      assert.deepEqual(radius, ["wanderRadius", "CELL_PRIVATE", "12"]);
      assert.equal(await js(page, `document.getElementById("entity-title").textContent`), `NPC ${watched}`);
      // Live: the position it shows follows the entity.
      const firstWhere = await js<string>(page, `document.getElementById("entity-where").textContent`);
      assert.match(firstWhere, new RegExp(`^space ${spaceId} · cellapp ${where.cellapp} `));
      await until(
        page,
        "the entity moving",
        `document.getElementById("entity-where").textContent !== ${JSON.stringify(firstWhere)}`,
      );

      const dir = await Deno.makeTempDir({ prefix: "dashboard_" });
      const shot = `${dir}/dashboard.png`;
      await page.screenshot({ path: shot as `${string}.png`, fullPage: true });
      console.log(`dashboard screenshot: ${shot}`);

      // Spawning from the page, then creating and deleting a space.
      await js(page, `document.getElementById("spawn-count").value = "7"`);
      await page.click("#spawn");
      await waitFor("the spawned NPCs", async () => realsOf(await spaceOf(admin, spaceId)) === 307, 15_000);
      await until(page, "the spawned NPCs", `Number(document.getElementById("world").dataset.entities) >= 305`);
      const list = async () =>
        ((await api(admin, "/api/spaces", { headers: auth })).body as { spaces: SpaceSummaryView[] }).spaces;
      const before = await list();
      await js(page, `document.getElementById("new-npcs").value = "20"`);
      await page.click("#create-space");
      const created = await waitFor(
        "a space made from the page",
        async () => (await list()).find((s) => !before.some((b) => b.id === s.id)) ?? null,
        15_000,
      );
      await until(
        page,
        `the new space ${created.id} with its 20 NPCs`,
        `document.getElementById("world").dataset.space === "${created.id}" && ` +
          `Number(document.getElementById("world").dataset.entities) === 20`,
        15_000,
      );

      await page.click("#delete-space");
      await waitFor("the space to be deleted", async () => {
        return (await api(admin, `/api/spaces/${created.id}`, { headers: auth })).status === 404;
      }, 15_000);
      assert.deepEqual(problems, []);
    } finally {
      await browser?.close();
    }
  },
});
