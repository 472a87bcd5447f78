/**
 * The cellapp running the default space dies: the cellappmgr makes the default space again on the other cellapp (in
 * this process, the buddy), and its NPCs come back from the buddy's backups: the same ones, no fresh ones besides.
 */
import assert from "node:assert/strict";
import { startCluster } from "../helpers/players.ts";
import { localCellApp } from "../helpers/local_cellapp.ts";
import { Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test("the default space's NPCs come back once each when its cellapp dies", opts, async () => {
  await using procs = new Procs();
  const cluster = await startCluster(procs, { mgrFlags: ["--npcs=15"] });
  const { local, other } = await localCellApp(cluster);
  try {
    const backedUp = await waitFor("the default space's 15 NPCs backed up here", () => {
      const ids = local.buddyStore.backupsFrom(other.address).filter((b) => b.spaceId === 1).map((b) => b.entity.id);
      return ids.length === 15 ? ids.sort((a, b) => a - b) : null;
    }, 10_000);

    cluster.cellapps[0].kill("SIGKILL");
    const npcsHere = () => {
      const cell = [...local.cells.values()].find((c) => c.spaceId === 1);
      return cell ? [...cell.entities.values()].filter((e) => e.type.name === "NPC").map((e) => e.id) : [];
    };
    await waitFor("the default space made here, with its NPCs back", () => npcsHere().length >= 15, 15_000);
    // The space is made before they come back: a fresh spawn would have been there first, or with them.
    assert.deepEqual(npcsHere().sort((a, b) => a - b), backedUp);
  } finally {
    await local.close("test over");
  }
});
