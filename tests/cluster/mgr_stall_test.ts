/**
 * A stalled cellappmgr (SIGSTOP, as a long GC pause, a VM hiccup or a paused container would) must not take its own
 * silence for its members': after SIGCONT every cellapp is still a member under its id and every NPC is still in the
 * world, once, for stalls shorter and longer than the dead timeout.
 */
import assert from "node:assert/strict";
import type { ClusterView, SpaceView } from "../../core/views.ts";
import { api, Procs } from "../helpers/procs.ts";
import { startCluster } from "../helpers/players.ts";
import { waitFor } from "../helpers/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const NPCS = 200;

async function census(admin: string): Promise<{ cellapps: string; reals: number }> {
  const c = (await api(admin, "/api/cluster")).body as ClusterView;
  const s = (await api(admin, "/api/spaces/1")).body as SpaceView;
  const cellapps = c.processes.filter((p) => p.role === "cellapp").map((p) => `${p.id}:${p.pid}`).sort().join(",");
  return { cellapps, reals: s.cells.reduce((n, cell) => n + cell.reals, 0) };
}

for (const stallMs of [3_000, 10_000]) {
  Deno.test(`a cellappmgr stopped for ${stallMs / 1000} s keeps its cellapps and every NPC`, opts, async () => {
    await using procs = new Procs();
    const cluster = await startCluster(procs, { cellapps: 2, mgrFlags: [`--npcs=${NPCS}`] });
    await waitFor("the NPCs in", async () => (await census(cluster.admin)).reals === NPCS, 20_000);
    const before = await census(cluster.admin);
    cluster.mgr.kill("SIGSTOP");
    await new Promise((r) => setTimeout(r, stallMs));
    cluster.mgr.kill("SIGCONT");
    // The cellapps gave up on its silence and dial again: they come back under their ids, with every NPC.
    const want = `${before.cellapps} ${NPCS}`;
    const now = async () => {
      const c = await census(cluster.admin).catch(() => null);
      return c ? `${c.cellapps} ${c.reals}` : "no answer";
    };
    await waitFor("the cellapps back under their ids with every NPC", async () => (await now()) === want, 15_000);
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal(await now(), want, "and they stay");
    }
    const log = [...cluster.mgr.stderr, ...cluster.cellapps.flatMap((c) => c.stderr)].join("\n");
    assert.doesNotMatch(log, /fenced|Dropped \d+ cell/, "no cellapp fenced or emptied for the cellappmgr's own stall");
  });
}
