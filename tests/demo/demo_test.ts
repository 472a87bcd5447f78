/**
 * `deno task demo` in headless Chromium: the launcher (demo/main.ts) starts its cluster and page server; two pages
 * log in near the border between cells of different cellapps, walk across it (one with the keyboard, one by
 * clicking), each sees the other cross, their connections stay the same, and a chat line reaches the other page.
 * Skipped, saying so, without Chromium. DEMO_SCREENSHOT=docs/demo.png saves the screenshot the docs show.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { parseReady, splitLines } from "../../cli/local_cluster.ts";
import { isAlive } from "../../testing/procs.ts";
import { waitFor, within } from "../../testing/wait.ts";
import { findChromium } from "../helpers/chromium.ts";
import { type Client, connect } from "../../client/mod.ts";
import { CHAT_RANGE, registry } from "../../demo/defs.ts";

const chromium = findChromium("demo_test");
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** The layout the demo makes (demo/main.ts): cell 1 (z < 120) and cell 2 (z >= 120) run on different cellapps. */
const BORDER_Z = 120;

interface Launched {
  child: Deno.ChildProcess;
  url: string;
  /** The baseapp's client URL and the demo's space. */
  server: string;
  spaceId: number;
  admin: string;
  /** The local cluster's processes, by pid (the launcher's children and grandchildren). */
  pids: number[];
  stderr: string[];
}

/** Starts the demo launcher and waits for its `{"demo": ...}` line. */
async function launch(): Promise<Launched> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--config", `${ROOT}deno.json`, `${ROOT}demo/main.ts`, "--http-port=0"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    env: { SEAMLESS_LOG_LEVEL: "warn" },
  }).spawn();
  const stderr: string[] = [];
  (async () => {
    for await (const l of child.stderr.pipeThrough(new TextDecoderStream()).pipeThrough(splitLines())) stderr.push(l);
  })().catch(() => {});
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).pipeThrough(splitLines()).getReader();
  const pids: number[] = [];
  type Ready = { url: string; server: string; spaceId: number; admin: string };
  const read = async (): Promise<Ready> => {
    for (;;) {
      const { value, done } = await lines.read();
      if (done) throw new Error(`the demo exited before it served its page: ${stderr.join("\n")}`);
      const ready = parseReady(value);
      if (ready?.role === "cluster") {
        pids.push(ready.pid, ...(ready.children as { pid: number }[]).map((c) => c.pid));
      }
      if (value.startsWith('{"demo"')) return (JSON.parse(value) as { demo: Ready }).demo;
    }
  };
  try {
    const ready = await within("the demo's page", read(), 45_000);
    (async () => {
      while (!(await lines.read()).done) { /* drain */ }
    })().catch(() => {});
    return { child, ...ready, pids, stderr };
  } catch (e) {
    child.kill("SIGKILL");
    await child.status;
    throw e;
  }
}

/** Stops the launcher with SIGTERM (it stops its cluster), then makes sure every process it started has ended. */
async function stop(l: Launched): Promise<void> {
  try {
    l.child.kill("SIGTERM");
  } catch {
    // already exited
  }
  const ended = await Promise.race([l.child.status, new Promise((r) => setTimeout(() => r(null), 15_000))]);
  if (ended === null) l.child.kill("SIGKILL");
  await l.child.status;
  await waitFor("the demo's cluster to stop", () => l.pids.every((p) => !isAlive(p)), 10_000).catch((e) => {
    for (const p of l.pids.filter(isAlive)) Deno.kill(p, "SIGKILL");
    throw e;
  });
}

async function until(page: Page, what: string, expr: string, ms = 15_000): Promise<void> {
  try {
    await page.waitForFunction(expr, { timeout: ms, polling: 100 });
  } catch (e) {
    const status = await page.evaluate(`document.getElementById("status")?.textContent`);
    throw new Error(`the page did not show ${what} within ${ms} ms (${expr}); status "${status}": ${e}`);
  }
}

/** An expression: the page's session sees player `name` at z beyond `than` (">" or "<"). */
const seesAt = (name: string, op: string, z: number) =>
  `globalThis.demo?.shown.some((e) => e.type === "Avatar" && e.name === "${name}" && e.z ${op} ${z})`;

Deno.test({
  name: "the demo: two players in Chromium walk across a cell border, see each other cross, and chat",
  ignore: chromium === null,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const demo = await launch();
    let browser: Browser | null = null;
    const problems: string[] = [];
    try {
      browser = await puppeteer.launch({
        executablePath: chromium!,
        headless: true,
        pipe: true,
        args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
      });
      const open = async (name: string, x: number) => {
        const page = await browser!.newPage();
        await page.setViewport({ width: 820, height: 590 });
        page.on("pageerror", (e) => problems.push(`${name}: page error: ${(e as Error).message}`));
        page.on("console", (m) => m.type() === "error" && problems.push(`${name}: console: ${m.text()}`));
        // ada's address logs her in at once; bob types his name into the login form. Bob's app.js comes late, as
        // on a loaded machine: the form must take his Enter before the app has loaded (the page's load event does
        // not wait for it).
        const auto = name === "ada" ? `name=${name}&` : "";
        if (!auto) {
          await page.setRequestInterception(true);
          page.on("request", (req) => {
            if (req.url().endsWith("/app.js")) setTimeout(() => req.continue(), 1500);
            else req.continue();
          });
        }
        await page.goto(`${demo.url}?${auto}x=${x}&z=${BORDER_Z - 8}`, { waitUntil: "load" });
        if (!auto) {
          await page.type("#name", name);
          await page.keyboard.press("Enter");
        }
        return page;
      };
      const [ada, bob] = await Promise.all([open("ada", 60), open("bob", 68)]);
      for (const page of [ada, bob]) {
        await until(page, "that it plays", `document.body.dataset.state === "playing"`);
        await until(page, "its cell", `document.body.dataset.cell === "1"`);
      }
      await until(ada, "bob north of the border", seesAt("bob", "<", BORDER_Z));
      await until(bob, "ada north of the border", seesAt("ada", "<", BORDER_Z));
      await until(ada, "wanderers", `globalThis.demo.shown.some((e) => e.type === "Wanderer")`);
      const layout = await (await fetch(`${demo.url}layout`)).json() as { cells: { id: number; cellapp: number }[] };
      const appOf = (id: number) => layout.cells.find((c) => c.id === id)?.cellapp;
      assert.ok(
        appOf(1) !== undefined && appOf(1) !== appOf(2),
        `cells 1 and 2 on different cellapps: ${JSON.stringify(layout)}`,
      );

      // Bob walks south with the keyboard; ada clicks a point 26 m south of her on the world view. The real is handed
      // over 10 m past the border (the offload hysteresis, docs/architecture.md, "Ghosts and hand-overs").
      await bob.bringToFront();
      await bob.keyboard.down("s");
      await until(bob, "bob handed over to cell 2", `document.body.dataset.cell === "2"`);
      await bob.keyboard.up("s");
      await ada.bringToFront();
      const box = (await ada.$("#world"))!;
      const r = (await box.boundingBox())!;
      // 560 px show 140 m: 4 px a metre.
      await ada.mouse.click(r.x + r.width / 2, r.y + r.height / 2 + 26 * 4);
      await until(ada, "ada handed over to cell 2", `document.body.dataset.cell === "2"`);

      // Each saw the other cross, over the connection it logged in with, and was told of its own crossing.
      await until(ada, "bob south of the border", seesAt("bob", ">", BORDER_Z + 2));
      await until(bob, "ada south of the border", seesAt("ada", ">", BORDER_Z + 2));
      for (const page of [ada, bob]) {
        const s = await page.evaluate(
          `({ crossings: demo.crossings, reconnects: demo.reconnects, toast: document.getElementById("toast").textContent })`,
        ) as { crossings: number; reconnects: number; toast: string };
        assert.equal(s.crossings, 1, JSON.stringify(s));
        assert.equal(s.reconnects, 0, JSON.stringify(s));
        assert.match(s.toast, /cell 1 into cell 2/);
      }

      // A chat line from ada reaches bob's page (and her own), through the Avatar's chat cell method.
      await ada.type("#say", "hello from ada");
      await ada.keyboard.press("Enter");
      for (const page of [bob, ada]) {
        await until(
          page,
          "ada's chat line",
          `document.getElementById("log").textContent.includes("ada: hello from ada")`,
        );
      }
      await ada.bringToFront();
      const shot = Deno.env.get("DEMO_SCREENSHOT");
      const png = await ada.screenshot({ type: "png" });
      assert.ok(png.length > 1000, "a screenshot");
      if (shot) await Deno.writeFile(shot, png);
      assert.deepEqual(problems, []);
    } catch (e) {
      console.error([...demo.stderr.slice(-30), ...problems].join("\n"));
      throw e;
    } finally {
      await browser?.close();
      await stop(demo);
    }
  },
});

Deno.test({
  name: "the demo's launcher serves the layout without its admin token, and a chat line reaches only players near",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const demo = await launch();
    const clients: Client[] = [];
    try {
      // The page server tells where to play and proxies the cells; the admin API itself wants the token it keeps.
      const config = await (await fetch(`${demo.url}config.json`)).text();
      assert.deepEqual(JSON.parse(config), { server: demo.server, spaceId: demo.spaceId, bounds: [0, 0, 240, 240] });
      const layout = await (await fetch(`${demo.url}layout`)).json() as { cells: { cellapp: number }[] };
      assert.equal(layout.cells.length, 4);
      assert.equal(new Set(layout.cells.map((c) => c.cellapp)).size, 2, JSON.stringify(layout));
      assert.equal((await fetch(`${demo.admin}/api/spaces/${demo.spaceId}`)).status, 401);
      const post = await fetch(`${demo.url}layout`, { method: "POST" });
      assert.equal(post.status, 405);
      await post.body?.cancel();
      const missing = await fetch(`${demo.url}../deno.json`);
      assert.equal(missing.status, 404);
      await missing.body?.cancel();

      // Three SDK clients in the demo's space: two side by side, one just beyond the chat's reach but within the AoI.
      const lines = new Map<string, string[]>();
      const join = async (name: string, x: number) => {
        const c = await connect(demo.server, {
          name,
          password: "demo",
          spaceId: demo.spaceId,
          position: { x, y: 0, z: 60 },
        }, { registry });
        clients.push(c);
        lines.set(name, []);
        const heard = (args: unknown[]) => lines.get(name)!.push(`${args[1]}: ${args[2]}`);
        c.on("clientMethod", (_e, m, args) => m === "onChat" && heard(args));
        c.on("playerMethod", (m, args) => m === "onChat" && heard(args));
        await waitFor(`${name} in the demo's space`, () => c.player.spaceId === demo.spaceId, 10_000);
        return c;
      };
      const [ada, bob, far] = [await join("ada", 20), await join("bob", 30), await join("far", 20 + CHAT_RANGE + 15)];
      await waitFor(
        "bob and far to see ada by name",
        () => [bob, far].every((c) => [...c.entities.values()].some((e) => e.props.playerName === "ada")),
        10_000,
      );
      ada.callCell(null, "chat", "  hi there  ");
      await waitFor(
        "ada's line at bob's and her own",
        () => lines.get("bob")!.includes("ada: hi there") && lines.get("ada")!.includes("ada: hi there"),
        10_000,
      );
      // far sees ada (so it would hear a line within reach) but is beyond onChat's detailDistance. Ada moves after
      // speaking: a witness sends an entity's events before any later position of it, so once far sees ada where she
      // went, a line to far would have come already.
      ada.move({ x: 21, y: 0, z: 60 });
      await waitFor(
        "far to see ada where she moved after speaking",
        () => {
          const seen = [...far.entities.values()].find((e) => e.props.playerName === "ada");
          return seen !== undefined && Math.abs(seen.position.x - 21) < 0.1;
        },
        10_000,
      );
      assert.deepEqual(lines.get("far"), []);
      // A blank line is dropped by the script; names are the accounts'.
      ada.callCell(null, "chat", "   ");
      bob.callCell(null, "chat", "from bob");
      await waitFor("bob's line at ada's", () => lines.get("ada")!.includes("bob: from bob"), 10_000);
      assert.deepEqual(lines.get("ada"), ["ada: hi there", "bob: from bob"]);
    } finally {
      for (const c of clients) c.close();
      await stop(demo);
    }
  },
});
