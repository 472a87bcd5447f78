/** Where the game comes from: --game, SEAMLESS_GAME or the config key, loaded and checked by cli/game.ts. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { parseCommand } from "../../core/config/mod.ts";
import { GameLoadError, loadGame } from "../../cli/game.ts";

const configOf = (args: string[], env: Record<string, string> = {}, file = "{}") => {
  const r = parseCommand(args, env, () => file);
  if (r.help) throw new Error("unexpected help");
  return r.config;
};

Deno.test("--game beats SEAMLESS_GAME, which beats the config file's game; none means the sample", () => {
  assert.equal(configOf([]).game, null);
  assert.equal(configOf(["--config=c.json"], {}, '{"game": "file.ts"}').game, "file.ts");
  assert.equal(configOf(["--config=c.json"], { SEAMLESS_GAME: "env.ts" }, '{"game": "file.ts"}').game, "env.ts");
  assert.equal(configOf(["--game=flag.ts"], { SEAMLESS_GAME: "env.ts" }).game, "flag.ts");
});

Deno.test("without --game the sample game loads through the same checks", async () => {
  const game = await loadGame(null);
  assert.equal(game.name, "sample");
  assert.ok(game.registry.find("NPC"));
});

Deno.test("a bad --game is a GameLoadError naming --game and the file", async () => {
  const dir = await Deno.makeTempDir({ prefix: "seamless-bad-game-" });
  try {
    const write = async (name: string, text: string) => {
      await Deno.writeTextFile(join(dir, name), text);
      return join(dir, name);
    };
    const cases: [string, RegExp][] = [
      [join(dir, "missing.ts"), /^--game: \S+missing\.ts: no such file$/],
      [dir, /: not a file/],
      [await write("nothing.ts", "export const x = 1;\n"), /nothing\.ts: the module exports no game/],
      [await write("broken.ts", "export const game = ;\n"), /broken\.ts: cannot load the module: /],
      [
        await write("empty.ts", "export const game = { name: 'e', registry: { types: [], find() {} } };\n"),
        /empty\.ts: game e: the registry has no entity types/,
      ],
      [
        await write("default.ts", "export default { name: 'd', registry: 3 };\n"),
        /default\.ts: game d: "registry" is not an entity registry/,
      ],
    ];
    for (const [path, message] of cases) {
      await assert.rejects(loadGame(path), (e) => {
        assert.ok(e instanceof GameLoadError, String(e));
        assert.match(e.message, message);
        assert.ok(!e.message.includes("\n"), "one line");
        return true;
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
