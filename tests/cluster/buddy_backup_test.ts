/**
 * NPC backups reach the buddy cellapp: a real cellappmgr and cellapp (processes), and a cellapp in this process whose
 * buddy store the test reads. The cellappmgr pairs them as each other's buddies, and drops the pairing when one dies.
 */
import assert from "node:assert/strict";
import type { CellEntityView } from "../../core/views.ts";
import { startCluster } from "../helpers/players.ts";
import { localCellApp } from "../helpers/local_cellapp.ts";
import { api, Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test("each cellapp backs its NPCs up to its buddy; a lone cellapp has no buddy", opts, async () => {
  await using procs = new Procs();
  const cluster = await startCluster(procs);
  const { local, other } = await localCellApp(cluster);
  try {
    await waitFor("the buddy named", () => local.backups.buddy?.id === other.id, 5000);
    assert.equal(local.backups.buddy!.address, other.address);

    // A space with a cell on each cellapp, and NPCs in both.
    const res = await api(cluster.admin, "/api/spaces", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ bounds: [-400, -400, 400, 400], cells: 2, entities: [{ type: "NPC", count: 40 }] }),
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const spaceId = (res.body as { id: number }).id;
    const theirs = async () => {
      const r = await api(cluster.admin, `/api/cellapps/${other.id}/cells/${spaceId}`);
      return (r.body as { entities: CellEntityView[] }).entities.filter((e) => e.real && e.type === "NPC");
    };
    assert.ok((await theirs()).length > 0, "the other cellapp holds NPCs of the space");
    // Every NPC real on the other cellapp is backed up here, at its position there.
    await waitFor("the other cellapp's NPCs backed up here", async () => {
      const held = new Map(
        local.buddyStore.backupsFrom(other.address).filter((b) => b.spaceId === spaceId).map((b) => [b.entity.id, b]),
      );
      const reals = await theirs();
      return reals.every((e) => {
        const b = held.get(e.id);
        return b !== undefined &&
          Math.hypot(b.entity.position[0] - e.position[0], b.entity.position[2] - e.position[2]) < 20;
      });
    }, 10_000);
    // Its own NPCs go at its own next tick, which need not have come yet.
    await waitFor("this cellapp backs its own NPCs up to the other", () => local.backups.stats.toBuddy > 0, 5000);

    // The other cellapp dies: this one is alone, with no buddy.
    cluster.cellapps[0].kill("SIGKILL");
    await waitFor("no buddy any more", () => local.backups.buddy === null, 10_000);
  } finally {
    await local.close("test over");
  }
});
