/**
 * An awaited call to an entity whose cellapp dies rejects with a clear error, and once the entity is restored from
 * its backup (by the buddy: a cellapp in this process) calls reach it again. The dying cellapp is a process.
 */
import assert from "node:assert/strict";
import { startCluster } from "../helpers/players.ts";
import { localCellApp } from "../helpers/local_cellapp.ts";
import { api, Procs } from "../../testing/procs.ts";
import { waitFor, within } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test(
  "a call to an entity lost with its cellapp rejects naming it; the restored entity answers",
  opts,
  async () => {
    await using procs = new Procs();
    const cluster = await startCluster(procs);
    const { local, other } = await localCellApp(cluster);
    try {
      await waitFor("the buddy named", () => local.backups.buddy?.id === other.id, 5000);
      // A small space split between the two cellapps: its NPCs are ghosted across the border.
      const res = await api(cluster.admin, "/api/spaces", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ bounds: [-40, -40, 40, 40], cells: 2, entities: [{ type: "NPC", count: 20 }] }),
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      const spaceId = (res.body as { id: number }).id;
      const cell = [...local.cells.values()].find((c) => c.spaceId === spaceId)!;
      const { caller, target } = await waitFor("a real here and a backed-up ghost of a real there", () => {
        const backedUp = new Set(local.buddyStore.backupsFrom(other.address).map((b) => b.entity.id));
        const target = [...cell.ghosts.values()].find((g) => backedUp.has(g.id));
        const caller = [...cell.entities.values()][0];
        return target && caller ? { caller, target } : null;
      }, 10_000);

      // The target's cellapp hangs, the call goes out, then the cellapp dies.
      const victim = cluster.cellapps[0];
      victim.kill("SIGSTOP");
      const call = cell.callEntity(caller, target.id, "hit", [1]);
      victim.kill("SIGKILL");
      await assert.rejects(
        within("the call's rejection", call, 10_000),
        new RegExp(`hit on entity ${target.id}: its real's cellapp at .* did not answer .*latest backup`),
      );

      await waitFor("the target restored here", () => cell.entities.get(target.id)?.isReal, 10_000);
      const left = await within("a call to the restored entity", cell.callEntity(caller, target.id, "hit", [1]));
      assert.equal(typeof left, "number");
    } finally {
      await local.close("test over");
    }
  },
);
