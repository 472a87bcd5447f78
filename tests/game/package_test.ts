/** The framework as a package: deno.json's name, version and exports agree with the code. */
import assert from "node:assert/strict";
import { VERSION } from "../../core/version.ts";
import * as root from "../../mod.ts";
import { game as sample } from "../../entities/mod.ts";
import { checkGame, defineGame, GameError } from "../../core/game.ts";

const config = JSON.parse(await Deno.readTextFile(new URL("../../deno.json", import.meta.url)));

Deno.test("deno.json names the package, with core/version.ts's version, and exports mod.ts, the SDK and defs", async () => {
  assert.equal(config.name, "@seamless/server");
  assert.equal(config.version, VERSION, "deno.json's version and core/version.ts's VERSION must agree");
  assert.deepEqual(config.exports, { ".": "./mod.ts", "./client": "./client/mod.ts", "./defs": "./defs.ts" });
  for (const path of Object.values(config.exports) as string[]) {
    assert.ok((await Deno.stat(new URL(`../../${path}`, import.meta.url))).isFile, path);
  }
  for (
    const name of [
      "defineEntity",
      "T",
      "createRegistry",
      "defineGame",
      "CellScript",
      "serverPlacement",
      "runServer",
      "loadDefs",
    ]
  ) {
    assert.ok(name in root, `mod.ts exports ${name}`);
  }
});

Deno.test("the browser entry points (defs, client) import no node: module, as the root does (runServer)", async () => {
  const graph = async (entry: string) => {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", new URL(`../../${entry}`, import.meta.url).pathname],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const info = JSON.parse(new TextDecoder().decode(out.stdout)) as {
      modules: { specifier: string; dependencies?: { specifier: string }[] }[];
    };
    return info.modules.flatMap((m) => (m.dependencies ?? []).map((d) => d.specifier)).filter((s) =>
      s.startsWith("node:")
    );
  };
  assert.deepEqual(await graph(config.exports["./defs"]), []);
  assert.deepEqual(await graph(config.exports["./client"]), []);
  assert.notDeepEqual(await graph(config.exports["."]), [], "the check sees node: modules where there are some");
});

Deno.test("the sample game passes the checks every --game does", () => {
  checkGame(sample);
  assert.deepEqual(sample.registry.types.map((t) => t.name), ["Account", "Avatar", "NPC", "Guild", "Dungeon"]);
  assert.deepEqual(Object.keys(sample.baseScripts ?? {}).sort(), ["Account", "Avatar", "Dungeon", "Guild"]);
  assert.deepEqual(sample.spaceCreated!({ bounds: { minX: 0, minZ: 0, maxX: 1, maxZ: 1 }, isDefault: true, npcs: 3 }), [
    { type: "NPC", count: 3 },
  ]);
});

Deno.test("defineGame names what is wrong with a game", () => {
  const bad = (g: unknown, message: RegExp) =>
    assert.throws(() => defineGame(g as never), (e) => {
      assert.ok(e instanceof GameError);
      assert.match(e.message, message);
      return true;
    });
  bad({ name: "g" }, /"registry" is not an entity registry/);
  bad(
    { name: "g", registry: sample.registry, cellScripts: { Goblin: class {} } },
    /cellScripts\.Goblin: the registry has no type Goblin/,
  );
  bad({ name: "g", registry: sample.registry, cellScripts: { Account: class {} } }, /type Account has no cell part/);
  bad({ name: "g", registry: sample.registry, playerType: "NPC" }, /playerType NPC is not a proxy with a base part/);
  bad({ name: "g", registry: sample.registry, playerType: "Guild" }, /playerType Guild is not a proxy/);
  bad({ name: "g", registry: sample.registry, playerType: "Hero" }, /playerType Hero is not a type of its registry/);
  bad({ name: "g", registry: sample.registry, placement: 3 }, /"placement" is not a function/);
});
