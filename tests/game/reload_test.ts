/** Loading a game again (cli/game_source.ts), checking it against the running one and swapping it in place. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { GameSource } from "../../cli/game_source.ts";
import { GameLoadError } from "../../cli/game.ts";
import { createRegistry, defineEntity, incompatibilities, PropertyContainer, T } from "../../core/def/mod.ts";
import { GameReloader } from "../../core/game_reload.ts";
import { writeReloadable } from "../../testing/games/reloadable.ts";

async function withGame(fn: (dir: string, source: GameSource) => Promise<void>): Promise<void> {
  const root = await Deno.makeTempDir({ prefix: "seamless-reload-" });
  try {
    const dir = join(root, "game");
    await fn(dir, new GameSource(await writeReloadable(dir)));
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

Deno.test("a reload loads the game's own files again, not only its entry, and leaves no copy behind", async () => {
  await withGame(async (dir, source) => {
    const first = await source.load();
    assert.equal(first.game.registry.get("Avatar").findProperty("mood"), undefined);
    await writeReloadable(dir, { mood: true }); // only defs.ts changes its definitions
    const second = await source.load();
    assert.ok(second.game.registry.get("Avatar").findProperty("mood"), "defs.ts was loaded again");
    assert.notEqual(first.version, second.version);
    assert.equal(second.version, await source.version(), "the version is the files'");
    const copies = [...Deno.readDirSync(join(dir, ".."))].filter((e) => e.name.includes(".reload-"));
    assert.equal(copies.length, 1, "only the copy in use is kept");
  });
});

Deno.test({
  name: "copies left by processes that are gone (killed, or killed mid-copy) are swept at the next load",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    await withGame(async (dir, source) => {
      // A pid no process has now, and one that runs (this test's parent): only the first one's copy goes.
      const alive = (pid: number) => {
        try {
          return Deno.statSync(`/proc/${pid}`).isDirectory;
        } catch {
          return false;
        }
      };
      let gone = 4_000_000;
      while (alive(gone)) gone++;
      const parent = join(dir, "..");
      const stale = join(parent, `.game.reload-${gone}-v3`), live = join(parent, `.game.reload-${Deno.ppid}-v1`);
      for (const d of [stale, live]) {
        await Deno.mkdir(d);
        await Deno.writeTextFile(join(d, "mod.ts"), "half a fil");
      }
      await source.load();
      const names = [...Deno.readDirSync(parent)].map((e) => e.name).filter((n) => n.includes(".reload-")).sort();
      assert.deepEqual(names, [`.game.reload-${Deno.pid}-v1`, `.game.reload-${Deno.ppid}-v1`].sort());
    });
  },
});

Deno.test("a module that throws on load is refused naming its own file and line", async () => {
  await withGame(async (dir, source) => {
    await writeReloadable(dir, { throws: true });
    await assert.rejects(source.load(), (e) => {
      assert.ok(e instanceof GameLoadError, String(e));
      assert.match(e.message, /this version of the game is broken/);
      assert.ok(e.message.includes(`${join(dir, "mod.ts")}:4:`), e.message);
      assert.ok(!e.message.includes(".reload-"), "the copy's path is not shown");
      return true;
    });
    const copies = [...Deno.readDirSync(join(dir, ".."))].filter((e) => e.name.includes(".reload-"));
    assert.equal(copies.length, 0);
  });
});

Deno.test("changes that would break live data or clients are named; added properties and methods are not", async () => {
  await withGame(async (dir, source) => {
    const base = (await source.load()).game.registry;
    const next = async (v: Parameters<typeof writeReloadable>[1]) => {
      await writeReloadable(dir, v);
      return incompatibilities(base, (await source.load()).game.registry);
    };
    assert.deepEqual(await next({ mood: true, step: 5 }), []);
    const retyped = await next({ retype: true });
    assert.equal(retyped.length, 1, retyped.join("; "));
    assert.match(retyped[0], /property Avatar\.score \(persistent\) changed type from INT32 to FLOAT32/);
    const signature = await next({ pokeArg: true });
    assert.equal(signature.length, 1, signature.join("; "));
    assert.match(
      signature[0],
      /cell method Avatar\.poke \(exposed to clients\) changed its signature from \(\) to \(INT32\)/,
    );
    const withMood = (await source.load()).game.registry; // pokeArg: poke(INT32)
    await writeReloadable(dir, {});
    const removed = incompatibilities(withMood, (await source.load()).game.registry);
    assert.ok(removed.some((r) => /poke/.test(r)), removed.join("; "));
  });
});

Deno.test("a swap keeps the registry's and the containers' identity and gives live values the new defaults", async () => {
  await withGame(async (dir, source) => {
    const current = await source.load();
    const registry = current.game.registry;
    const type = registry.get("Avatar");
    const c = new PropertyContainer(type, "all", { entityId: 7 });
    const view = c.view as Record<string, unknown>;
    view.score = 3;
    const reloader = new GameReloader(current, () => source.load(), (next) => registry.adopt(next.game.registry));
    await writeReloadable(dir, { mood: true });
    await reloader.prepare(1);
    reloader.commit(1);
    c.upgrade();
    assert.equal(registry.get("Avatar"), type, "the type object stays");
    assert.equal(view.score, 3, "the live value stays");
    assert.equal(view.mood, "calm", "the new property has its default");
    view.mood = "glad";
    assert.equal(c.get("mood"), "glad");
    assert.equal(reloader.view.reloads, 1);
    await writeReloadable(dir, { retype: true });
    await assert.rejects(reloader.prepare(2), /changed type/);
    assert.throws(() => reloader.commit(2), /no game is prepared/);
    assert.match(reloader.view.error ?? "", /changed type/);
  });
});

Deno.test("the sample game (no --game) reloads from a copy of entities/ beside it", async () => {
  const source = new GameSource(null);
  const { game, version } = await source.load();
  assert.equal(game.name, "sample");
  assert.ok(game.registry.find("NPC"));
  assert.equal(version, await source.version());
});

Deno.test("a method clients do not call may change its signature; one they call or are called with may not", () => {
  const avatar = (arg: typeof T.INT32 | typeof T.STRING) =>
    createRegistry({
      entities: [defineEntity({
        name: "Avatar",
        hasBase: true,
        hasCell: true,
        hasClient: true,
        cellMethods: { hit: { args: [arg] }, wave: { args: [arg], exposed: true } },
        clientMethods: { onWave: { args: [arg] } },
      })],
    });
  const found = incompatibilities(avatar(T.INT32), avatar(T.STRING));
  assert.equal(found.length, 2, found.join("; "));
  assert.match(
    found[0],
    /cell method Avatar\.wave \(exposed to clients\) changed its signature from \(INT32\) to \(STRING\)/,
  );
  assert.match(found[1], /client method Avatar\.onWave changed its signature/);
});
