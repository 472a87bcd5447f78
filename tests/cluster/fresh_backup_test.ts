/**
 * NPCs spawned on a cellapp that is killed with -9 a fraction of a backup period later come back on its buddy: new
 * reals are backed up at once, not on their tick of the period (cell/backup/backup_sender.ts).
 */
import assert from "node:assert/strict";
import type { CellEntityView } from "../../core/views.ts";
import { startCluster } from "../helpers/players.ts";
import { localCellApp } from "../helpers/local_cellapp.ts";
import { api, Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
/** Well within the 1 s backup period: before the change, about three in four of the new NPCs had no backup yet. */
const KILL_AFTER_MS = 300;

Deno.test("NPCs spawned moments before their cellapp is killed with -9 are restored on its buddy", opts, async () => {
  await using procs = new Procs();
  const cluster = await startCluster(procs);
  const { local, other } = await localCellApp(cluster);
  try {
    await waitFor("each the other's buddy", () => local.backups.buddy?.id === other.id, 5000);

    // A space with a cell on each cellapp, 80 NPCs spread over both.
    const res = await api(cluster.admin, "/api/spaces", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ bounds: [-400, -400, 400, 400], cells: 2, entities: [{ type: "NPC", count: 80 }] }),
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const spaceId = (res.body as { id: number }).id;
    const theirs = await waitFor(
      "the other cellapp's NPCs",
      async () => {
        const r = await api(cluster.admin, `/api/cellapps/${other.id}/cells/${spaceId}`);
        if (r.status !== 200) return null;
        const ids = (r.body as { entities: CellEntityView[] }).entities.filter((e) => e.real && e.type === "NPC");
        return ids.length > 10 ? ids.map((e) => e.id).sort((a, b) => a - b) : null;
      },
      5000,
      5,
    );
    await new Promise((r) => setTimeout(r, KILL_AFTER_MS));
    cluster.cellapps[0].kill("SIGKILL");

    const realsHere = () => {
      const cell = [...local.cells.values()].find((c) => c.spaceId === spaceId);
      return cell ? [...cell.entities.values()].filter((e) => e.isReal && e.type.name === "NPC").map((e) => e.id) : [];
    };
    const backedUp = () => local.buddyStore.backupsFrom(other.address).filter((b) => b.spaceId === spaceId).length;
    try {
      await waitFor("every NPC of the killed cellapp restored here", () => {
        const here = new Set(realsHere());
        return theirs.every((id) => here.has(id));
      }, 10_000);
    } catch (e) {
      const here = new Set(realsHere());
      throw new Error(
        `${(e as Error).message}; ${theirs.filter((id) => !here.has(id)).length} of ${theirs.length} lost ` +
          `(backups held from it: ${backedUp()})`,
      );
    }
    const ids = realsHere();
    assert.equal(new Set(ids).size, ids.length, "none twice");
  } finally {
    await local.close("test over");
  }
});
