/**
 * Game reloads with real processes (docs/game.md#reloading-a-game): a cellappmgr, two cellapps and a baseapp run a
 * two-file game from a folder of its own; players connected through the SDK move and call methods across reloads.
 * A reload changes a method's behaviour and adds a property that live entities and clients get with its default,
 * with nobody disconnected; an incompatible change and a module that throws are refused with their reason, the old
 * game running on; a reload while a player crosses between cells of two cellapps loses nothing.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type Client, connect } from "../../client/mod.ts";
import type { EntityRegistry } from "../../core/def/mod.ts";
import type { ClusterView, EntityInspectView, GameReloadView, SpaceView } from "../../core/views.ts";
import { api, Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";
import { writeReloadable } from "../../testing/games/reloadable.ts";
import { cellReady, entityAt, seen, startBaseProcess, startCluster, tempDir } from "../helpers/players.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const POST = { method: "POST", headers: { "content-type": "application/json" } };

async function scoreOf(admin: string, id: number): Promise<unknown> {
  const e = (await api(admin, `/api/entities/${id}`)).body as EntityInspectView;
  return e.properties?.find((p) => p.name === "score")?.value;
}

async function versions(admin: string): Promise<{ role: string; version?: string; error?: string }[]> {
  const { processes } = (await api(admin, "/api/cluster")).body as ClusterView;
  return processes.map((p) => ({ role: p.role, version: p.game?.version, error: p.game?.error }));
}

Deno.test("a game reload across the cluster keeps players, entities and connections", opts, async () => {
  await using procs = new Procs();
  await using dir = await tempDir();
  const gameDir = join(dir.path, "game");
  const game = `--game=${await writeReloadable(gameDir)}`;
  const { registry } = await import(pathToFileURL(join(gameDir, "mod.ts")).href) as { registry: EntityRegistry };
  const cluster = await startCluster(procs, { cellapps: 2, mgrFlags: [game], cellFlags: [game] });
  const { clientUrl } = await startBaseProcess(procs, cluster, [game, "--max-speed=1000"]);
  const made = await api(cluster.admin, "/api/spaces", {
    ...POST,
    body: JSON.stringify({ bounds: [0, 0, 200, 100], cells: 2 }),
  });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const spaceId = (made.body as { id: number }).id;
  const border = ((await api(cluster.admin, `/api/spaces/${spaceId}`)).body as SpaceView).tree as { at: number };
  const login = async (name: string, x: number): Promise<Client> => {
    const c = await connect(clientUrl, { name, password: "pw", spaceId, position: { x, y: 0, z: 50 } }, { registry });
    await cellReady(c);
    return c;
  };
  const ann = await login("ann", border.at - 20);
  const bob = await login("bob", border.at - 25);
  const closed: string[] = [];
  for (const c of [ann, bob]) c.on("close", (code, reason) => closed.push(`${c.player.id}: ${code} ${reason}`));
  const annSeen = await seen(bob, ann.player.id);
  const before = await versions(cluster.admin);
  assert.equal(new Set(before.map((p) => p.version)).size, 1, JSON.stringify(before));

  ann.callCell(null, "poke");
  await waitFor("ann's score 1", async () => await scoreOf(cluster.admin, ann.player.id) === 1);
  const greetings: unknown[] = [];
  ann.on("playerProperty", (name, value) => name === "greeting" && greetings.push(value));
  ann.callBase("greet");
  await waitFor("ann's base greets with 1", () => greetings.includes("hello 1"));

  // Before the reload the game lets anyone in, and has no Pebble.
  const early = await login("carl", border.at - 30);
  early.close();
  const pebbles = {
    ...POST,
    body: JSON.stringify({ bounds: [0, 0, 100, 100], entities: [{ type: "Pebble", count: 2 }] }),
  };
  const unknown = await api(cluster.admin, "/api/spaces", pebbles);
  assert.equal(unknown.status, 400, JSON.stringify(unknown.body));
  assert.match(JSON.stringify(unknown.body), /unknown entity type; known types: Avatar/);
  // A compatible change: poke adds 10, a new property with a default, and a login check that refuses carl.
  await writeReloadable(gameDir, { step: 10, mood: true, refuse: "carl", pebble: true });
  let definitions = 0;
  bob.on("definitions", () => definitions++);
  const reload = await api(cluster.admin, "/api/game/reload", POST);
  assert.equal(reload.status, 200, JSON.stringify(reload.body));
  const done = reload.body as GameReloadView;
  assert.equal(done.processes.length, 4);
  assert.ok(
    done.processes.every((p) => p.version === done.version && p.reloads === 1 && !p.error),
    JSON.stringify(done),
  );
  assert.notEqual(done.version, before[0].version);
  const after = await versions(cluster.admin);
  assert.ok(after.every((p) => p.version === done.version && !p.error), JSON.stringify(after));

  // The admin API spawns the new type, and the new login check holds from the next login on.
  const spawned = await api(cluster.admin, "/api/spaces", pebbles);
  assert.equal(spawned.status, 201, JSON.stringify(spawned.body));
  await assert.rejects(login("carl", border.at - 30), (e: Error) => e.message.includes("no carl here"));
  ann.callCell(null, "poke");
  await waitFor("ann's score 11", async () => await scoreOf(cluster.admin, ann.player.id) === 11);
  const inspected = (await api(cluster.admin, `/api/entities/${ann.player.id}`)).body as EntityInspectView;
  assert.equal(inspected.properties.find((p) => p.name === "mood")?.value, "calm", "the live entity has the default");
  await waitFor("bob sees ann's score 11 and her mood", () => {
    const e = bob.entities.get(ann.player.id);
    return e?.props.score === 11 && e.props.mood === "calm";
  });
  assert.equal(definitions, 1);
  assert.ok(registry.get("Avatar").findProperty("mood"), "the SDK's registry has the new property");
  assert.equal(bob.entities.get(ann.player.id), annSeen, "bob's view of ann is the same entity");
  ann.callBase("greet");
  await waitFor("ann's base script greets with 10", () => greetings.includes("hello 10"));
  ann.callCell(null, "cheer"); // a method the reload added, setting the property it added
  await waitFor("bob sees ann glad", () => bob.entities.get(ann.player.id)?.props.mood === "glad");
  ann.move({ x: border.at - 15, y: 0, z: 50 });
  await waitFor(
    "ann moved after the reload",
    async () => (await entityAt(cluster.admin, ann.player.id))?.position[0] === border.at - 15,
  );

  // Refused: a retyped persistent property; a module that throws. The game of the last reload runs on everywhere.
  await writeReloadable(gameDir, { step: 10, mood: true, pebble: true, retype: true });
  const retyped = await api(cluster.admin, "/api/game/reload", POST);
  assert.equal(retyped.status, 409, JSON.stringify(retyped.body));
  const retypedWhy = (retyped.body as { error: { message: string } }).error.message;
  assert.match(retypedWhy, /property Avatar\.score \(persistent\) changed type from INT32 to FLOAT32/);
  assert.match(retypedWhy, /cellappmgr: .*cellapp \d+: .*baseapp \d+: /, "every process refused it");
  await writeReloadable(gameDir, { step: 10, mood: true, pebble: true, throws: true });
  const thrown = await api(cluster.admin, "/api/game/reload", POST);
  assert.equal(thrown.status, 409, JSON.stringify(thrown.body));
  const thrownWhy = (thrown.body as { error: { message: string } }).error.message;
  assert.match(thrownWhy, /this version of the game is broken/);
  assert.ok(thrownWhy.includes(`${join(gameDir, "mod.ts")}:4:`), thrownWhy);
  const refused = await versions(cluster.admin);
  assert.ok(refused.every((p) => p.version === done.version), JSON.stringify(refused));
  assert.ok(refused.every((p) => /broken/.test(p.error ?? "")), "each process says why its reload failed");
  ann.callCell(null, "poke");
  await waitFor(
    "ann's score 21: the reloaded game runs on",
    async () => await scoreOf(cluster.admin, ann.player.id) === 21,
  );

  // A reload while ann walks back and forth between the two cellapps' cells: the game takes 1.5 s to load in every
  // process, and ann crosses every 0.6 s, so she changes cellapp while the reload runs.
  await writeReloadable(gameDir, { step: 100, mood: true, pebble: true, slowMs: 1500 });
  const holders = new Set<number>();
  let walking = true;
  const walk = (async () => {
    for (let i = 0; walking; i++) {
      const x = border.at + (Math.floor(i / 12) % 2 === 0 ? -20 + 3.5 * (i % 12) : 20 - 3.5 * (i % 12));
      ann.move({ x, y: 0, z: 50 });
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  const watch = (async () => {
    while (walking) {
      const e = await entityAt(cluster.admin, ann.player.id);
      if (e) holders.add(e.cellapp);
    }
  })();
  await waitFor("ann crossed to the other cellapp", () => holders.size === 2, 15_000);
  holders.clear();
  const during = await api(cluster.admin, "/api/game/reload", POST);
  assert.equal(holders.size, 2, "ann changed cellapp while the reload ran");
  holders.clear();
  await waitFor("ann crossed again after the reload", () => holders.size === 2, 15_000);
  walking = false;
  await Promise.all([walk, watch]);
  assert.equal(during.status, 200, JSON.stringify(during.body));
  ann.callCell(null, "poke");
  await waitFor("ann's score 121", async () => await scoreOf(cluster.admin, ann.player.id) === 121);
  assert.deepEqual(closed, [], "nobody was disconnected");
  ann.close();
  bob.close();
});

Deno.test(
  "--watch: the local cluster reloads the game everywhere when a file of its folder changes",
  opts,
  async () => {
    await using procs = new Procs();
    await using dir = await tempDir();
    const gameDir = join(dir.path, "game");
    const entry = await writeReloadable(gameDir);
    const parent = await procs.start(
      ["--watch", `--game=${entry}`, "--port=0", "--admin-port=0", "--cellapps=1", "--npcs=0", "--kv=:memory:"],
      { readyTimeoutMs: 60_000 },
    );
    for (const c of parent.ready.children as { pid: number }[]) procs.adopt(c.pid);
    const admin = parent.ready.admin!;
    const first = await waitFor("three processes on one game version", async () => {
      const v = await versions(admin);
      return v.length === 3 && v.every((p) => p.version === v[0].version) ? v[0].version : null;
    }, 30_000);
    await writeReloadable(gameDir, { step: 2, mood: true }); // both files change: one reload after the quiet moment
    const { processes } = await waitFor("every process on the new version", async () => {
      const view = (await api(admin, "/api/cluster")).body as ClusterView;
      return view.processes.every((p) => p.game?.version !== first && p.game?.reloads) ? view : null;
    }, 20_000);
    assert.equal(new Set(processes.map((p) => p.game?.version)).size, 1);
    assert.ok(processes.every((p) => p.game?.reloads === 1), JSON.stringify(processes.map((p) => p.game)));
    await writeReloadable(gameDir, { step: 2, mood: true, throws: true });
    await waitFor("each process says why the broken game was refused", async () => {
      const v = await versions(admin);
      return v.every((p) => /broken/.test(p.error ?? ""));
    }, 20_000);
  },
);
