/**
 * A game in its own folder, outside this repository, laid out as README.md
 * says: the framework beside it, imported as `@seamless/server` through the
 * game's deno.json, and the local cluster started by the game's own
 * `deno task start`. Its types run, its cell script runs, its
 * spaceCreated hook fills the default space, the sample types are absent, and
 * a bad --game stops the program with one line naming the flag and the file.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { parseReady, splitLines } from "../../cli/local_cluster.ts";
import type { ReadyInfo } from "../../core/process.ts";
import type { CellEntityView } from "../../core/views.ts";
import { api, Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const REPO = fileURLToPath(new URL("../../", import.meta.url));

/** The files of the workspace, as docs/game.md ("A game in its own repository") shows them. */
const FILES: Record<string, string> = {
  // README.md's layout: the game names the framework's entry points; the framework's files keep its own imports.
  "game/deno.json": JSON.stringify({
    imports: {
      "@seamless/server": "../seamless/mod.ts",
      "@seamless/server/client": "../seamless/client/mod.ts",
      "@seamless/server/defs": "../seamless/defs.ts",
    },
    unstable: ["kv"],
    tasks: { start: "deno run -A main.ts" },
  }),
  "game/mod.ts": `
import { CellScript, createRegistry, defineEntity, defineGame, T } from "@seamless/server";

export const Beacon = defineEntity({
  name: "Beacon",
  hasBase: false,
  hasCell: true,
  hasClient: true,
  properties: { height: { type: T.FLOAT32, flags: "ALL_CLIENTS", default: 42 } },
});

/** Makes a beacon where it is told: another cell of its space, or another space. */
export const Seeder = defineEntity({
  name: "Seeder",
  hasCell: true,
  properties: {
    toSpace: { type: T.INT32, flags: "CELL_PRIVATE" },
    toX: { type: T.FLOAT32, flags: "CELL_PRIVATE" },
    toZ: { type: T.FLOAT32, flags: "CELL_PRIVATE" },
  },
});

/** A beacon rises to its height as it is made. */
class BeaconCell extends CellScript<{ height: number }> {
  override onCreated(): void {
    const p = this.self.position;
    this.self.position = { x: p.x, y: this.self.props.height, z: p.z };
  }
}

class SeederCell extends CellScript<{ toSpace: number; toX: number; toZ: number }> {
  override onCreated(): void {
    const { toSpace, toX, toZ } = this.self.props;
    this.self.createEntity("Beacon", { x: toX, y: 0, z: toZ }, { height: 3 }, toSpace > 0 ? toSpace : undefined);
  }
}

export const game = defineGame({
  name: "beacons",
  registry: createRegistry({ entities: [Beacon, Seeder] }),
  cellScripts: { Beacon: BeaconCell, Seeder: SeederCell },
  spaceCreated: (space) => space.isDefault ? [{ type: "Beacon", count: 2 }] : [],
});
`,
  "game/main.ts": `
import { runServer } from "@seamless/server";

await runServer({ game: new URL("./mod.ts", import.meta.url) });
`,
  "game/client.ts": `
import { connect } from "@seamless/server/client";
import { game } from "./mod.ts";

export const play = (url: string) => connect(url, { name: "ada", password: "pw" }, { registry: game.registry });
`,
  "game/empty.ts": `export const notAGame = 1;\n`,
};

/** Writes the workspace into a fresh temporary folder, with the framework checkout at seamless/. */
async function makeWorkspace(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "seamless-game-" });
  assert.ok(!dir.startsWith(REPO), `${dir} must lie outside the repository`);
  // A checkout of the framework (a git clone or submodule in a real game); a link to this one here.
  await Deno.symlink(REPO, join(dir, "seamless"));
  await Deno.mkdir(join(dir, "game"));
  for (const [path, text] of Object.entries(FILES)) await Deno.writeTextFile(join(dir, path), text);
  return dir;
}

/** `deno task start ARGS` in the game's folder: the task runner's child, its ready line, its stderr. */
function startTask(dir: string, args: string[]) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["task", "start", ...args],
    cwd: join(dir, "game"),
    env: { SEAMLESS_LOG_LEVEL: "info", NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr: string[] = [];
  (async () => {
    for await (const line of child.stderr.pipeThrough(new TextDecoderStream()).pipeThrough(splitLines())) {
      stderr.push(line);
    }
  })().catch(() => {});
  const ready = (async (): Promise<ReadyInfo | null> => {
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).pipeThrough(splitLines()).getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return null;
      const r = parseReady(value);
      if (r) {
        (async () => {
          while (!(await reader.read()).done) { /* drain */ }
        })().catch(() => {});
        return r;
      }
    }
  })();
  return { child, ready, stderr };
}

const post = (admin: string, path: string, body: unknown) =>
  api(admin, path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

Deno.test("a game in its own folder runs a cluster with its own types and scripts only", opts, async () => {
  const dir = await makeWorkspace();
  await using procs = new Procs();
  try {
    const run = startTask(dir, [
      "--port=0",
      "--admin-port=0",
      "--cellapps=2",
      "--baseapps=0",
      "--kv=:memory:",
      "--npcs=5",
      "--balance-period=0",
    ]);
    const ready = await run.ready;
    assert.ok(ready, `the cluster did not start:\n${run.stderr.join("\n")}`);
    procs.adopt(ready.pid);
    for (const c of (ready.children ?? []) as { pid: number }[]) procs.adopt(c.pid);
    const admin = ready.admin!;

    const cellapps = await waitFor("both cellapps", async () => {
      const p = ((await api(admin, "/api/cluster")).body as { processes: { id: number; role: string }[] }).processes;
      const ids = p.filter((x) => x.role === "cellapp").map((x) => x.id);
      return ids.length === 2 ? ids : undefined;
    });
    /** The reals of space `spaceId`, over both cellapps, each with the cellapp holding it. */
    const entities = async (spaceId = 1): Promise<(CellEntityView & { cellapp: number })[]> => {
      const lists = await Promise.all(cellapps.map(async (cellapp) => {
        const r = await api(admin, `/api/cellapps/${cellapp}/cells/${spaceId}`);
        const es = r.status === 200 ? (r.body as { entities: CellEntityView[] }).entities : [];
        return es.filter((e) => e.real).map((e) => ({ ...e, cellapp }));
      }));
      return lists.flat();
    };

    // The game's spaceCreated hook put two beacons in the default space; --npcs named no type of this game.
    const first = await waitFor("the default space's beacons", async () => {
      const es = await entities();
      return es.length >= 2 ? es : undefined;
    });
    assert.deepEqual(first.map((e) => e.type), ["Beacon", "Beacon"]);
    // Its cell script ran: each rose to its default height.
    for (const e of first) assert.equal(e.position[1], 42, `beacon ${e.id} at ${e.position}`);

    // The admin API spawns the game's type, with its properties; the script lifts it to the height it was given.
    const spawned = await post(admin, "/api/spaces/1/entities", {
      entities: [{ type: "Beacon", count: 1, props: { height: 7 }, position: [10, 0, 10] }],
    });
    assert.equal(spawned.status, 201, JSON.stringify(spawned.body));
    await waitFor("the spawned beacon at height 7", async () => {
      const b = (await entities()).find((e) => e.position[0] === 10 && e.position[2] === 10);
      return b?.position[1] === 7;
    });

    // The sample types are not there.
    const npc = await post(admin, "/api/spaces/1/entities", { entities: [{ type: "NPC", count: 1 }] });
    assert.equal(npc.status, 400, JSON.stringify(npc.body));
    assert.match(JSON.stringify(npc.body), /Beacon/, "the error lists the game's types");
    assert.deepEqual(new Set((await entities()).map((e) => e.type)), new Set(["Beacon"]));

    // A script creates at a point of its space's other cell, on the other cellapp...
    const made = await post(admin, "/api/spaces", { bounds: [0, 0, 400, 100], cells: 2, balance: false });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const space = (made.body as { id: number }).id;
    const seed = (at: number[], to: Record<string, number>, spaceId = space) =>
      post(admin, `/api/spaces/${spaceId}/entities`, {
        entities: [{ type: "Seeder", count: 1, position: at, props: to }],
      });
    assert.equal((await seed([50, 0, 50], { toX: 350, toZ: 20 })).status, 201);
    const [seeder, beacon] = await waitFor("the beacon made by the seeder in the other cell", async () => {
      const es = await entities(space);
      const s = es.find((e) => e.type === "Seeder");
      const b = es.find((e) => e.type === "Beacon" && e.position[0] === 350 && e.position[2] === 20);
      return s && b ? [s, b] : undefined;
    });
    assert.notEqual(beacon.cellapp, seeder.cellapp, "the two cells are on different cellapps");
    assert.equal(beacon.position[1], 3, "its script ran where it was made");
    // ... and in another space.
    assert.equal((await seed([0, 0, 0], { toSpace: space, toX: 10, toZ: 90 }, 1)).status, 201);
    await waitFor("the beacon made from the default space", async () => {
      const b = (await entities(space)).find((e) => e.position[0] === 10 && e.position[2] === 90);
      return b?.type === "Beacon" && b.position[1] === 3;
    });

    Deno.kill(ready.pid, "SIGTERM");
    assert.equal((await run.child.status).code, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a bad --game fails at start with one line naming the flag and the file, and exit code 2", opts, async () => {
  const dir = await makeWorkspace();
  try {
    const cases: [string, RegExp][] = [
      ["--game=./missing.ts", /^error: --game: \S*missing\.ts: no such file$/],
      ["--game=./empty.ts", /^error: --game: \S*empty\.ts: the module exports no game/],
    ];
    for (const [flag, message] of cases) {
      const run = startTask(dir, ["--port=0", "--admin-port=0", "--kv=:memory:", flag]);
      assert.equal(await run.ready, null, `${flag} started`);
      assert.equal((await run.child.status).code, 2, flag);
      const errors = run.stderr.filter((l) => l.startsWith("error:"));
      assert.equal(errors.length, 1, run.stderr.join("\n"));
      assert.match(errors[0], message);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test(
  "the game type-checks against the package: its scripts without casts, the SDK through ./client",
  opts,
  async () => {
    const dir = await makeWorkspace();
    try {
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["check", "mod.ts", "main.ts", "client.ts"],
        cwd: join(dir, "game"),
        env: { NO_COLOR: "1" },
      }).output();
      assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);
