/**
 * A game whose entity types come from KBEngine-style .def files (this repository's fixture
 * tests/def/fixtures/kbengine_style, copied into the game's folder) with TypeScript cell scripts bound by type name:
 * its own cluster of real main.ts processes runs them, SDK clients log in as its Player and see a Guard's HP fall.
 * What the loader ignored is listed once, each with file and line; a .def naming an unknown type stops the program
 * at start with one line naming the file, the line and the type.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { connect } from "../../client/mod.ts";
import type { EntityView } from "../../client/mod.ts";
import { loadDefs } from "../../mod.ts";
import { Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";
import { freePort, makeArena, readmeBlocks, REPO, runInGame, TEST_CLUSTER_FLAGS } from "../helpers/game_folder.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const FIXTURE = join(REPO, "tests/def/fixtures/kbengine_style");

const MOD = `
import { CellScript, defineGame, loadDefs } from "@seamless/server";

const registry = await loadDefs(new URL("./defs/", import.meta.url));

/** A guard loses 1 HP five times a second. */
class GuardCell extends CellScript<{ HP: number }> {
  override onCreated(): void {
    this.self.addTimer(0.2, 0.2);
  }
  override onTimer(): void {
    this.self.props.HP -= 1;
  }
}

export const game = defineGame({
  name: "guards",
  registry,
  playerType: "Player",
  cellScripts: { Guard: GuardCell },
  spaceCreated: (space) => space.isDefault ? [{ type: "Guard", count: 2 }] : [],
});
`;

/** The README's game folder with MOD as its game and the fixture's .def files in defs/. */
async function defGame() {
  const blocks = await readmeBlocks("A game in its own repository");
  const json = blocks.find((b) => b.lang === "json")!.text;
  const main = blocks.find((b) => b.text.includes("runServer("))!.text;
  const made = await makeArena({ "deno.json": json, "main.ts": main, "mod.ts": MOD });
  const copy = await new Deno.Command("cp", { args: ["-r", FIXTURE, join(made.game, "defs")] }).output();
  assert.equal(copy.code, 0);
  return made;
}

Deno.test(
  "a game of .def types runs a cluster; SDK clients log in as its Player and see a Guard's HP change",
  opts,
  async () => {
    const { arena, game } = await defGame();
    await using procs = new Procs();
    try {
      const port = freePort();
      const run = runInGame(game, ["task", "start", `--client-port=${port}`, ...TEST_CLUSTER_FLAGS]);
      const ready = await run.ready;
      assert.ok(ready, `the cluster did not start:\n${run.stderr.join("\n")}`);
      procs.adopt(ready.pid);
      for (const c of (ready.children ?? []) as { pid: number }[]) procs.adopt(c.pid);

      const registry = await loadDefs(join(game, "defs"));
      const clients = await Promise.all(
        ["ada", "bob"].map((name) => connect(`ws://127.0.0.1:${port}/`, { name, password: "pw" }, { registry })),
      );
      try {
        for (const c of clients) assert.equal(c.player.type.name, "Player");
        // Each sees a guard, then its HP fall below what it was when it came into view.
        await Promise.all(clients.map(async (c) => {
          const guard = await waitFor(
            "a guard in view",
            () => [...c.entities.values()].find((e: EntityView) => e.type.name === "Guard"),
            15_000,
          );
          const first = guard.props.HP as number;
          assert.ok(first <= 100, `HP ${first}`);
          await waitFor(`guard ${guard.id}'s HP below ${first}`, () => (guard.props.HP as number) < first, 5000);
        }));
        // Each client's own Player is there with the interface's HP.
        for (const c of clients) assert.equal(c.player.props.HP, 100);
      } finally {
        for (const c of clients) c.close();
      }

      // What the loader ignored is listed once, by the program the user started, each with its file and line.
      const listed = run.stderr.filter((l) => l.startsWith("warning: "));
      assert.ok(listed.length > 0, run.stderr.join("\n"));
      for (const l of listed) assert.match(l, /^warning: \S+\/defs\/\S+\.(def|xml):\d+: /);
      assert.equal(listed.filter((l) => l.includes("<optimized>")).length, 1, listed.join("\n"));
      assert.equal(new Set(listed).size, listed.length, "each once");

      Deno.kill(ready.pid, "SIGTERM");
      assert.equal((await run.child.status).code, 0);
      await run.drained;
    } finally {
      await Deno.remove(arena, { recursive: true });
    }
  },
);

Deno.test(
  "a .def with an unknown type stops the game at start with one line naming the file, line and type",
  opts,
  async () => {
    const { arena, game } = await defGame();
    try {
      const file = join(game, "defs/entity_defs/Guard.def");
      const text = await Deno.readTextFile(file);
      await Deno.writeTextFile(file, text.replace("VECTOR3", "VECTOR9"));
      const line = text.split("\n").findIndex((l) => l.includes("VECTOR3")) + 1;
      const run = runInGame(game, ["task", "start", ...TEST_CLUSTER_FLAGS]);
      assert.equal(await run.ready, null);
      assert.equal((await run.child.status).code, 2);
      await run.drained;
      const lines = run.stderr.filter((l) => !/^Task start /.test(l));
      assert.equal(lines.length, 1, run.stderr.join("\n"));
      assert.match(lines[0], /^error: --game: \S+mod\.ts: /);
      assert.ok(lines[0].includes(`${file}:${line}`), `names ${file}:${line}: ${lines[0]}`);
      assert.match(lines[0], /VECTOR9/);
    } finally {
      await Deno.remove(arena, { recursive: true });
    }
  },
);
