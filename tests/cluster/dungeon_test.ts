/**
 * The sample dungeon end to end (docs/game.md, "Instances"): a cellappmgr, two cellapps and two baseapps as main.ts
 * processes running the sample game, a player on each baseapp. One opens a dungeon for both: a Dungeon base made on
 * the least loaded baseapp makes a new space (createInNewSpace) and brings each member in (a base-asked teleport);
 * both see the boss its cell part spawned, strike it dead, and each hears of it from the Dungeon's base (a direct
 * client message, across baseapps for one of them); both go home; the last one out closes the dungeon and the
 * emptied space shuts down: the admin API lists it no more and no cellapp has a cell of it.
 */
import assert from "node:assert/strict";
import { type Client, connect } from "../../client/mod.ts";
import { registry } from "../../entities/mod.ts";
import { DUNGEON_ENTRANCE } from "../../entities/dungeon_base.ts";
import { BOSS_NAME } from "../../entities/dungeon_cell.ts";
import { api, Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";
import type { ClusterView, SpaceSummaryView } from "../../core/views.ts";
import { cellReady, entityAt, startBaseProcess, startCluster } from "../helpers/players.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

/** A client's chat lines as [from, text], and its error replies. */
function listen(c: Client): { chats: [number, string][]; errors: string[] } {
  const out = { chats: [] as [number, string][], errors: [] as string[] };
  c.on("playerMethod", (name, args) => name === "onChat" && out.chats.push([args[0] as number, args[1] as string]));
  c.on("error", (code, message) => out.errors.push(`${code} ${message}`));
  return out;
}

Deno.test(
  "a party of two enters a dungeon instance, kills its boss, leaves, and the instance shuts down",
  opts,
  async () => {
    await using procs = new Procs();
    const cluster = await startCluster(procs, { cellapps: 2 });
    const one = await startBaseProcess(procs, cluster, [], {}, true);
    const two = await startBaseProcess(procs, cluster, [], {}, true);
    const a = await connect(one.clientUrl, { name: "ann", password: "pw" }, { registry });
    const b = await connect(two.clientUrl, { name: "bob", password: "pw" }, { registry });
    const [ha, hb] = [listen(a), listen(b)];
    const spaces = async () =>
      ((await api(cluster.admin, "/api/spaces")).body as { spaces: SpaceSummaryView[] }).spaces;
    try {
      assert.equal(await cellReady(a), 1);
      assert.equal(await cellReady(b), 1);

      // Ann opens a dungeon for both: a new space, and both players in it at the entrance.
      a.callBase("openDungeon", b.player.id);
      const opened = await waitFor(
        "the dungeon open",
        () => ha.chats.find(([, t]) => t.startsWith("dungeon open")),
        15_000,
      );
      const [dungeonId, text] = opened;
      const spaceId = Number(/in space (\d+)/.exec(text)![1]);
      assert.ok(spaceId > 1);
      assert.ok((await spaces()).some((s) => s.id === spaceId && !s.isDefault), "the instance is listed");
      for (const c of [a, b]) {
        const at = await waitFor(`${c.player.id} in the instance`, async () => {
          const e = await entityAt(cluster.admin, c.player.id);
          return e?.spaceId === spaceId ? e : null;
        });
        assert.deepEqual([at.position[0], at.position[2]], [DUNGEON_ENTRANCE.x, DUNGEON_ENTRANCE.z]);
      }
      // The keeper itself is in the instance, never seen by a client.
      assert.equal((await entityAt(cluster.admin, dungeonId))?.spaceId, spaceId);

      // Both see the boss; each strikes it once (50 hp of 100), the second blow kills it.
      const bossOf = (c: Client) => () => [...c.entities.values()].find((e) => e.props.name === BOSS_NAME);
      const boss = await waitFor("ann sees the boss", bossOf(a), 10_000);
      assert.equal((await waitFor("bob sees the boss", bossOf(b), 10_000)).id, boss.id);
      assert.ok(![...a.entities.values()].some((e) => e.id === dungeonId), "the keeper has no client part");
      // Talking to the boss: it answers Ann's client alone, through her base (a direct message from a cell).
      a.callCell(boss.id, "talkTo", a.player.id);
      await waitFor(
        "the boss's answer",
        () => ha.chats.some(([id, t]) => id === boss.id && t === `${BOSS_NAME}: well met`),
      );
      assert.ok(!hb.chats.some(([id]) => id === boss.id), "bob did not hear it");
      a.callCell(null, "strike", boss.id);
      await waitFor("ann's blow", () => ha.chats.some(([id, t]) => id === boss.id && t === "hit: 50 hp left"));
      b.callCell(null, "strike", boss.id);
      await waitFor("bob's blow", () => hb.chats.some(([id, t]) => id === boss.id && t === "hit: 0 hp left"));
      // The Dungeon's base tells each member's client directly, wherever that player's base is.
      for (const h of [ha, hb]) {
        await waitFor(
          "the boss's death told",
          () => h.chats.some(([id, t]) => id === dungeonId && t === "the boss is dead"),
        );
      }
      await waitFor("the boss gone", async () => (await entityAt(cluster.admin, boss.id)) === null);
      await waitFor("the boss gone from ann's view", () => !a.entities.has(boss.id));

      const cellapps = ((await api(cluster.admin, "/api/cluster")).body as ClusterView).processes
        .filter((p) => p.role === "cellapp");
      assert.equal(cellapps.length, 2);
      const cellsOf = async () =>
        (await Promise.all(cellapps.map((p) => api(cluster.admin, `/api/cellapps/${p.id}/cells/${spaceId}`))))
          .filter((r) => r.status === 200).length;
      assert.equal(await cellsOf(), 1, "one cellapp runs the instance's cell");

      // Ann goes home: the instance stays for Bob.
      a.callBase("leaveDungeon");
      await waitFor("ann home", async () => (await entityAt(cluster.admin, a.player.id))?.spaceId === 1);
      assert.ok((await spaces()).some((s) => s.id === spaceId), "still open while bob is inside");
      // Bob goes home: the last one out closes the dungeon, and the emptied instance shuts down.
      b.callBase("leaveDungeon");
      await waitFor("bob home", async () => (await entityAt(cluster.admin, b.player.id))?.spaceId === 1);
      await waitFor("the instance shut down", async () => !(await spaces()).some((s) => s.id === spaceId), 10_000);
      assert.equal(await entityAt(cluster.admin, dungeonId), null, "the keeper's cell part is gone");
      await waitFor("no cellapp with a cell of the instance", async () => (await cellsOf()) === 0);
      // Both players still play in the default space; nothing went wrong on the way.
      assert.ok((await spaces()).some((s) => s.id === 1));
      assert.deepEqual([...ha.errors, ...hb.errors], []);

      // Abandoned with its boss alive: the boss goes with the dungeon, and the instance shuts down all the same.
      const openedBefore = ha.chats.length;
      a.callBase("openDungeon", b.player.id);
      const again = await waitFor(
        "a second dungeon open",
        () => ha.chats.slice(openedBefore).find(([, t]) => t.startsWith("dungeon open")),
        15_000,
      );
      const second = Number(/in space (\d+)/.exec(again[1])![1]);
      assert.notEqual(second, spaceId);
      const boss2 = await waitFor("bob sees the second boss", bossOf(b), 10_000);
      a.callBase("leaveDungeon");
      b.callBase("leaveDungeon");
      await waitFor(
        "the abandoned instance shut down",
        async () => !(await spaces()).some((s) => s.id === second),
        10_000,
      );
      assert.equal(await entityAt(cluster.admin, boss2.id), null, "its boss went with it");

      // A partner who is no player: whoever came in goes home, and no instance is left behind.
      a.callBase("openDungeon", 999_999);
      await waitFor("the refusal", () => ha.errors.some((e) => /999999/.test(e)), 15_000);
      await waitFor("no instance left", async () => (await spaces()).every((s) => s.isDefault), 10_000);
      await waitFor("ann home", async () => (await entityAt(cluster.admin, a.player.id))?.spaceId === 1);
    } finally {
      a.close();
      b.close();
    }
  },
);
