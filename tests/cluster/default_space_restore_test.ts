/**
 * The cellapp running the default space dies: the cellappmgr makes the default space again on the other cellapp (in
 * this process, the buddy), and its NPCs come back from the buddy's backups: the same ones, no fresh ones besides.
 */
import assert from "node:assert/strict";
import { CellApp } from "../../cell/mod.ts";
import { parseCommand } from "../../core/config.ts";
import type { ClusterView } from "../../core/views.ts";
import { cellScripts, registry } from "../../entities/mod.ts";
import { memoryLogger } from "../helpers/log.ts";
import { startCluster } from "../helpers/players.ts";
import { api, Procs } from "../helpers/procs.ts";
import { waitFor } from "../helpers/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test("the default space's NPCs come back once each when its cellapp dies", opts, async () => {
  await using procs = new Procs();
  const cluster = await startCluster(procs, { mgrFlags: ["--npcs=15"] });
  const parsed = parseCommand(["--role=cell", `--mgr=${cluster.mgrAddress}`, "--port=0", "--log-level=warn"], {});
  if (parsed.help) throw new Error("unreachable: no --help given");
  const local = new CellApp(parsed.config, memoryLogger(), { registry, scripts: cellScripts });
  try {
    await local.member.link.registered;
    const processes = ((await api(cluster.admin, "/api/cluster")).body as ClusterView).processes;
    const other = processes.find((p) => p.role === "cellapp" && p.id !== local.member.link.id)!;
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
