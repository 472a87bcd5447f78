/**
 * Base scripts placing cell entities (docs/game.md, "Instances"): one baseapp in this process against a real
 * cellappmgr and cellapp. createCellEntity near an entity and in a space, createInNewSpace with its limits,
 * destroyCellEntity, a base-asked teleport and direct client messages, each way they go wrong named; a new space's
 * cell on the least loaded cellapp or on the preferred host's; and an instance space of two cells on two cellapps
 * shutting down once its last entity is gone.
 */
import assert from "node:assert/strict";
import type { BaseEntityApi } from "../../core/base_script.ts";
import { MAX_NEW_SPACE_CELLS, MAX_NEW_SPACE_SIDE } from "../../core/new_space.ts";
import type { ClusterView, SpaceSummaryView, SpaceView } from "../../core/views.ts";
import { api, Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";
import { cellReady, entityAt, startCluster } from "../helpers/players.ts";
import { login, startBase } from "./fixtures.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test("base scripts place, move and destroy cell entities and message a player's client", opts, async () => {
  // Two cellapps on two loopback hosts: the first runs the default space's cell, the second none.
  await using procs = new Procs();
  const cluster = await startCluster(procs, { cellapps: 2, cellAt: (i) => ({ flags: [`--host=127.0.0.${i + 1}`] }) });
  await using b = await startBase({}, { cluster });
  const app = b.app;
  const hostOfCellApp = new Map(
    ((await api(b.admin, "/api/cluster")).body as ClusterView).processes
      .filter((p) => p.role === "cellapp")
      .map((p) => [p.id, p.address.replace(/:\d+$/, "")]),
  );
  assert.deepEqual([...hostOfCellApp.values()].sort(), ["127.0.0.1", "127.0.0.2"]);
  const hostsOf = async (spaceId: number) =>
    ((await api(b.admin, `/api/spaces/${spaceId}`)).body as SpaceView).cells.map((c) => hostOfCellApp.get(c.cellapp));
  const c = await login(app, { name: "ann", spaceId: 1, position: { x: 3, y: 0, z: 4 } });
  await cellReady(c);
  const chats: [number, string][] = [];
  c.on("playerMethod", (name, args) => name === "onChat" && chats.push([args[0] as number, args[1] as string]));
  const me = app.proxies.get(c.player.id)!.script!.self as BaseEntityApi;

  // Bad input is refused before anything is asked, naming the limit.
  await assert.rejects(me.createInNewSpace({ size: 1e9 }), /size: .*MAX_NEW_SPACE_SIDE/);
  await assert.rejects(me.createInNewSpace({ size: MAX_NEW_SPACE_SIDE + 1 }), /at most|MAX_NEW_SPACE_SIDE/);
  await assert.rejects(me.createInNewSpace({ size: 100, cells: MAX_NEW_SPACE_CELLS + 1 }), /MAX_NEW_SPACE_CELLS/);
  await assert.rejects(me.createInNewSpace({ size: { width: 100, depth: -1 } }), /depth of a new space/);
  await assert.rejects(me.createInNewSpace({ size: 100 }), /Avatar \d+ has a cell entity already \(live\)/);

  // A keeper with a cell part and no client (the sample's Dungeon), made on the least loaded baseapp (this one).
  const ref = await me.createBaseAnywhere("Dungeon", { party: [] });
  const keeper = app.proxies.get(ref.id)!.script!.self as BaseEntityApi;
  assert.equal(keeper.cell.exists, false);
  await assert.rejects(keeper.createCellEntity({ spaceId: 9999, position: { x: 0, y: 0, z: 0 } }), /no space 9999/);
  await assert.rejects(keeper.createCellEntity({ near: 999_999 }), /near entity 999999: it has no cell entity/);
  await assert.rejects(keeper.destroyCellEntity(), /Dungeon \d+ has no cell entity to destroy/);
  await assert.rejects(keeper.teleport({ x: 0, y: 0, z: 0 }, 1), /there is no cell entity now/);

  // Near the player: in its space, at its position.
  const near = await keeper.createCellEntity({ near: c.player.id });
  assert.deepEqual(near, { spaceId: 1, position: { x: 3, y: 0, z: 4 } });
  assert.equal((await entityAt(b.admin, ref.id))?.spaceId, 1);
  await assert.rejects(keeper.createCellEntity({ near: c.player.id }), /has a cell entity already/);
  await keeper.destroyCellEntity();
  await waitFor("the keeper's cell entity gone", async () => (await entityAt(b.admin, ref.id)) === null);
  assert.equal(keeper.cell.exists, false);

  // A new space goes to the cellapp with fewer cells (127.0.0.2), unless a host is preferred: then to its cellapp.
  const dungeonB = await app.scripts.createBaseAnywhere("Dungeon", { party: [] });
  const preferring = app.proxies.get(dungeonB.id)!.script!.self as BaseEntityApi;
  const preferred = await preferring.createInNewSpace({ size: 100, preferredHost: "127.0.0.1" });
  assert.deepEqual(await hostsOf(preferred.spaceId), ["127.0.0.1"], "the preferred host's cellapp");
  const dungeonA = await app.scripts.createBaseAnywhere("Dungeon", { party: [] });
  const plain = app.proxies.get(dungeonA.id)!.script!.self as BaseEntityApi;
  const alone = await plain.createInNewSpace({ size: 100 });
  assert.deepEqual(await hostsOf(alone.spaceId), ["127.0.0.2"], "the least loaded cellapp");

  // A new space with navigation geometry: every cellapp of it builds the mesh; a file that is no mesh is refused.
  const nav = (name: string) => new URL(`../fixtures/nav/${name}`, import.meta.url).pathname;
  const dungeonN = await app.scripts.createBaseAnywhere("Dungeon", { party: [] });
  const navKeeper = app.proxies.get(dungeonN.id)!.script!.self as BaseEntityApi;
  await assert.rejects(navKeeper.createInNewSpace({ size: 300, geometry: "" }), /geometry "" is not a file path/);
  await assert.rejects(
    navKeeper.createInNewSpace({ size: 300, geometry: nav("not_a_mesh.obj") }),
    (e: Error) => e.message.includes("not_a_mesh.obj"),
  );
  const walled = await navKeeper.createInNewSpace({ size: 300, geometry: nav("wall.obj") });
  const walledView = (await api(b.admin, `/api/spaces/${walled.spaceId}`)).body as SpaceView;
  assert.equal(walledView.navGeometry, nav("wall.obj"));
  assert.equal(walledView.shutDownWhenEmpty, true);
  await navKeeper.destroyCellEntity();

  // A new space of two cells (one on each cellapp); the keeper is its first entity, the player teleports in.
  const made = await keeper.createInNewSpace({ size: 200, cells: 2 });
  assert.ok(made.spaceId > 1);
  assert.deepEqual(made.position, { x: 0, y: 0, z: 0 });
  const spaces = async () => ((await api(b.admin, "/api/spaces")).body as { spaces: SpaceSummaryView[] }).spaces;
  assert.deepEqual((await hostsOf(made.spaceId)).sort(), ["127.0.0.1", "127.0.0.2"]);
  await me.teleport({ x: 50, y: 0, z: 20 }, made.spaceId);
  const there = await entityAt(b.admin, c.player.id);
  assert.equal(there?.spaceId, made.spaceId);
  assert.deepEqual([there?.position[0], there?.position[2]], [50, 20]);
  await assert.rejects(me.teleport({ x: 0, y: 0, z: 0 }, 9999), /no space 9999/);

  // Direct client messages: to a player's client by id; a base without a client, or none at all, is named.
  await keeper.clientOf(c.player.id).call("onChat", ref.id, "welcome in");
  await waitFor("the direct message", () => chats.some(([from, t]) => from === ref.id && t === "welcome in"));
  await assert.rejects(keeper.clientOf(ref.id).call("onChat", 0, "x"), /Dungeon \d+ has no client now/);
  await assert.rejects(keeper.clientOf(999_999).call("onChat", 0, "x"), /no such base entity/);
  await assert.rejects(keeper.clientOf(c.player.id).call("nope"), /has no client method 'nope'/);

  // The keeper's cell part spawned a boss there; the player kills it (a cell call from its base).
  const boss = await waitFor(
    "the boss at the client",
    () => [...c.entities.values()].find((e) => e.type.name === "NPC"),
  );
  assert.equal(boss.props.name, "Boss");
  await me.cell.call("strike", boss.id);
  await me.cell.call("strike", boss.id);
  await waitFor("the boss gone", async () => (await entityAt(b.admin, boss.id)) === null);

  // Everyone leaves: the instance of two cells shuts down, and the admin API no longer lists it.
  await me.teleport({ x: 1, y: 0, z: 1 }, 1);
  assert.equal((await entityAt(b.admin, c.player.id))?.spaceId, 1);
  assert.ok((await spaces()).some((s) => s.id === made.spaceId), "still there while the keeper is in it");
  await keeper.destroyCellEntity();
  await waitFor("the emptied instance shut down", async () => !(await spaces()).some((s) => s.id === made.spaceId));
  assert.ok((await spaces()).some((s) => s.id === 1), "the default space stays");

  // A keeper with nothing persistent leaves nothing in the database; a type without a cell part has none to place.
  await keeper.destroy();
  assert.equal(app.proxies.has(ref.id), false);
  assert.equal(await app.store.load(ref.id), null);
  const guild = app.proxies.get((await me.createBaseAnywhere("Guild", { name: "g" })).id)!.script!
    .self as BaseEntityApi;
  await assert.rejects(guild.createCellEntity({ near: c.player.id }), /Guild \d+ has no cell part/);
  await assert.rejects(guild.createInNewSpace({ size: 100 }), /Guild \d+ has no cell part/);
  await assert.rejects(guild.destroyCellEntity(), /Guild \d+ has no cell part/);
  c.close();
});
