/**
 * Base scripts placing cell entities (docs/game.md, "Instances"): one baseapp in this process against a real
 * cellappmgr and cellapp. createCellEntity near an entity and in a space, createInNewSpace with its limits,
 * destroyCellEntity, a base-asked teleport and direct client messages, each way they go wrong named; and an instance
 * space of two cells shutting down once its last entity is gone.
 */
import assert from "node:assert/strict";
import type { BaseEntityApi } from "../../core/base_script.ts";
import { MAX_NEW_SPACE_CELLS, MAX_NEW_SPACE_SIDE } from "../../core/new_space.ts";
import type { SpaceSummaryView } from "../../core/views.ts";
import { api } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";
import { cellReady, entityAt } from "../helpers/players.ts";
import { login, startBase } from "./fixtures.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test("base scripts place, move and destroy cell entities and message a player's client", opts, async () => {
  await using b = await startBase();
  const app = b.app;
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

  // A new space of two cells, preferring this host; the keeper is its first entity, the player teleports in.
  const made = await keeper.createInNewSpace({ size: 200, cells: 2, preferredHost: "127.0.0.1" });
  assert.ok(made.spaceId > 1);
  assert.deepEqual(made.position, { x: 0, y: 0, z: 0 });
  const spaces = async () => ((await api(b.admin, "/api/spaces")).body as { spaces: SpaceSummaryView[] }).spaces;
  const listed = (await spaces()).find((s) => s.id === made.spaceId);
  assert.equal(listed?.cells, 2, JSON.stringify(listed));
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
  c.close();
});
