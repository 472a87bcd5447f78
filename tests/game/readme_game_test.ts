/**
 * README.md's "A game in its own repository", followed literally in a fresh folder outside the repository: its
 * files are the README's code blocks, its cluster is the game's own `deno task start` with the pinned Deno run from
 * inside the game's folder, a baseapp serves clients on the `--client-port` given, the README's client sees the
 * beacons count their steps, nothing on stderr is a warning, and the game's own page bundles without `node:`
 * modules and plays in Chromium. Without its player type the game stops at start with one line and status 2.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import puppeteer, { type Browser } from "puppeteer-core";
import { Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";
import { findChromium } from "../helpers/chromium.ts";
import {
  freePort,
  GAME_DENO,
  makeArena,
  readmeBlocks,
  runInGame,
  startGameCluster,
  TEST_CLUSTER_FLAGS,
} from "../helpers/game_folder.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const chromium = findChromium("readme_game_test");

/** The game's files from the README's code blocks; the shell block's steps are checked to be the ones run here. */
async function readmeGame(): Promise<Record<string, string>> {
  const blocks = await readmeBlocks("A game in its own repository");
  const sh = blocks.find((b) => b.lang === "sh")!.text;
  for (
    const step of ["mkdir arena && cd arena && git init", "ln -s ~/src/seamless seamless", "mkdir game && cd game"]
  ) {
    assert.ok(sh.includes(step), `the README's steps include ${step}`);
  }
  assert.match(sh, /export PATH="\$PWD\/\.\.\/seamless\/toolchain\/node_modules\/\.bin:\$PATH"/);
  const ts = blocks.filter((b) => b.lang === "ts").map((b) => b.text);
  const pick = (what: RegExp) => {
    const found = ts.filter((t) => what.test(t));
    assert.equal(found.length, 1, `one README block matches ${what}`);
    return found[0];
  };
  return {
    "deno.json": blocks.find((b) => b.lang === "json")!.text,
    "defs.ts": pick(/from "@seamless\/server\/defs"/),
    "mod.ts": pick(/defineGame\(/),
    "main.ts": pick(/runServer\(/),
    "client.ts": pick(/from "@seamless\/server\/client"/),
  };
}

const warnings = (lines: string[]) => lines.filter((l) => /warn/i.test(l));

Deno.test(
  "the README's game runs from its own folder: a baseapp, a client that sees beacons step, no warnings",
  opts,
  async () => {
    const { arena, game } = await makeArena(await readmeGame());
    await using procs = new Procs();
    try {
      const port = freePort();
      const cluster = await startGameCluster(game, port, procs);
      const client = runInGame(game, ["run", "-A", "client.ts", `ws://127.0.0.1:${port}/`]);
      // Its props print as their values; then it sees a beacon's steps change.
      const entered = await waitFor("the client to see a beacon", () => {
        return client.stdout.map((l) => /^sees Beacon (\d+) \{ steps: (\d+) \}$/.exec(l)).find((m) => m);
      }, 20_000).catch((e) => {
        throw new Error(
          `${e.message}\nclient stdout:\n${client.stdout.join("\n")}\nstderr:\n${client.stderr.join("\n")}`,
        );
      });
      const [, id, first] = entered;
      await waitFor("a step of that beacon", () => {
        return client.stdout.some((l) => {
          const m = /^Beacon (\d+) steps = (\d+)$/.exec(l);
          return m !== null && m[1] === id && Number(m[2]) > Number(first);
        });
      }, 10_000);
      client.child.kill("SIGTERM");
      await client.drained;
      // Stopping warns of the processes that leave: what the cluster printed until now is its start.
      const started = [...cluster.stderr];
      assert.ok(started.some((l) => /baseapp\[\d+\]: serving clients at ws:/.test(l)), started.join("\n"));

      Deno.kill((await cluster.ready)!.pid, "SIGTERM");
      assert.equal((await cluster.child.status).code, 0);
      await cluster.drained;
      assert.deepEqual(warnings(started), [], "no warning from starting the game");
      assert.deepEqual(warnings(client.stderr), [], "no warning from running the client");
      // The README's code type-checks as it is (deno run does not check).
      const check = runInGame(game, ["check", "defs.ts", "mod.ts", "main.ts", "client.ts"]);
      const checked = await check.child.status;
      await check.drained;
      assert.equal(checked.code, 0, check.stderr.join("\n"));
    } finally {
      await Deno.remove(arena, { recursive: true });
    }
  },
);

Deno.test("the README's game without its player type stops at start with one line and status 2", opts, async () => {
  const files = await readmeGame();
  files["defs.ts"] = files["defs.ts"].replace("entities: [Avatar, Beacon]", "entities: [Beacon]");
  files["mod.ts"] = files["mod.ts"].replace(/^\s*playerType: "Avatar",\n/m, "");
  assert.ok(!files["mod.ts"].includes("playerType"));
  const { arena, game } = await makeArena(files);
  try {
    const run = runInGame(game, ["task", "start", ...TEST_CLUSTER_FLAGS]);
    assert.equal(await run.ready, null, "it did not start");
    assert.equal((await run.child.status).code, 2);
    await run.drained;
    const lines = run.stderr.filter((l) => !/^Task start /.test(l));
    assert.equal(lines.length, 1, run.stderr.join("\n"));
    assert.match(
      lines[0],
      /^error: --game: \S*game\/mod\.ts: game beacons: its player type Avatar .*is not a type of its registry \(known: Beacon\)/,
    );
  } finally {
    await Deno.remove(arena, { recursive: true });
  }
});

/** The game's own page: its definitions and the SDK, nothing else. */
const PAGE = `
import { connect } from "@seamless/server/client";
import { registry } from "../defs.ts";

const server = new URLSearchParams(location.search).get("server")!;
const client = await connect(server, { name: "web", password: "pw" }, { registry });
client.on("property", (e, name, value) => {
  if (e.type.name === "Beacon" && name === "steps") document.body.dataset.steps = String(value);
});
document.body.dataset.player = String(client.player.id);
`;

Deno.test({
  name: "the game's own page bundles with no node: module (deno task browser from a subfolder) and plays in Chromium",
  ignore: chromium === null,
  ...opts,
  async fn() {
    const { arena, game } = await makeArena(await readmeGame());
    await using procs = new Procs();
    let browser: Browser | null = null;
    const web = join(game, "web");
    await Deno.mkdir(web);
    await Deno.writeTextFile(join(web, "page.ts"), PAGE);
    await Deno.writeTextFile(
      join(web, "index.html"),
      `<!doctype html><link rel="icon" href="data:,"><script type="module" src="page.js"></script>`,
    );
    const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
      const name = new URL(req.url).pathname.slice(1);
      if (!/^[\w.-]+$/.test(name)) return new Response("not found", { status: 404 });
      const type = name.endsWith(".js") ? "text/javascript" : "text/html";
      return new Response(await Deno.readFile(join(web, name)), { headers: { "content-type": type } });
    });
    try {
      const port = freePort();
      const [cluster] = await Promise.all([
        startGameCluster(game, port, procs),
        (async () => {
          // Paths relative to where the task is run: the game's web/ folder, not the framework's.
          const build = runInGame(web, ["task", "browser", "page.ts", "--out=page.js"], join(game, GAME_DENO));
          const status = await build.child.status;
          await build.drained;
          assert.equal(status.code, 0, build.stderr.join("\n"));
        })(),
      ]);
      const bundled = await Deno.readTextFile(join(web, "page.js"));
      assert.doesNotMatch(bundled, /["']node:/, "the page's bundle imports no node: module");

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
      const query = new URLSearchParams({ server: `ws://127.0.0.1:${port}/` });
      await page.goto(`http://127.0.0.1:${server.addr.port}/index.html?${query}`, { waitUntil: "load" });
      await page.waitForFunction(
        `Number(document.body.dataset.steps) > 0 && Number(document.body.dataset.player) > 0`,
        {
          timeout: 20_000,
        },
      ).catch((e) => {
        throw new Error(`the page saw no beacon step: ${e}; ${problems.join("; ")}`);
      });
      assert.deepEqual(problems, []);
      Deno.kill((await cluster.ready)!.pid, "SIGTERM");
      await cluster.child.status;
    } finally {
      await browser?.close();
      await server.shutdown();
      await Deno.remove(arena, { recursive: true });
    }
  },
});
