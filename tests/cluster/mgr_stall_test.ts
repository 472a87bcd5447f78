/**
 * A stalled cellappmgr (SIGSTOP, as a long GC pause, a VM hiccup or a paused container would) must not take its own
 * silence for its members': after SIGCONT every cellapp and baseapp is still a member under its id, every NPC and
 * player is still in the world, once, and the players' connections stayed up, for stalls shorter and longer than the
 * dead timeout.
 */
import assert from "node:assert/strict";
import type { ClusterView, SpaceView } from "../../core/views.ts";
import { api, Procs } from "../../testing/procs.ts";
import { cellReady, startBaseProcess, startCluster } from "../helpers/players.ts";
import { type Client, connect } from "../../client/mod.ts";
import { registry } from "../../entities/mod.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const NPCS = 200;
const PLAYERS = 4;

async function census(admin: string): Promise<{ cellapps: string; reals: number }> {
  const c = (await api(admin, "/api/cluster")).body as ClusterView;
  const s = (await api(admin, "/api/spaces/1")).body as SpaceView;
  const cellapps = c.processes.filter((p) => p.role !== "cellappmgr").map((p) => `${p.role} ${p.id}:${p.pid}`).sort()
    .join(",");
  return { cellapps, reals: s.cells.reduce((n, cell) => n + cell.reals, 0) };
}

for (const stallMs of [3_000, 10_000]) {
  Deno.test(`a cellappmgr stopped for ${stallMs / 1000} s keeps its cellapps and every NPC`, opts, async () => {
    await using procs = new Procs();
    const cluster = await startCluster(procs, { cellapps: 2, mgrFlags: [`--npcs=${NPCS}`] });
    const base = await startBaseProcess(procs, cluster);
    const players: Client[] = [];
    const closed: string[] = [];
    for (let i = 0; i < PLAYERS; i++) {
      const c = await connect(base.clientUrl, {
        name: `stall-${i}`,
        password: "pw",
        position: { x: 10 * i, y: 0, z: 5 },
      }, {
        registry,
      });
      players.push(c);
      c.on("close", () => closed.push(`stall-${i}`));
      await cellReady(c);
    }
    await waitFor("everyone in", async () => (await census(cluster.admin)).reals === NPCS + PLAYERS, 20_000);
    const before = await census(cluster.admin);
    cluster.mgr.kill("SIGSTOP");
    await new Promise((r) => setTimeout(r, stallMs));
    cluster.mgr.kill("SIGCONT");
    // The cellapps gave up on its silence and dial again: they come back under their ids, with every NPC.
    const want = `${before.cellapps} ${NPCS + PLAYERS}`;
    const now = async () => {
      const c = await census(cluster.admin).catch(() => null);
      return c ? `${c.cellapps} ${c.reals}` : "no answer";
    };
    await waitFor(
      "the members back under their ids with every NPC and player",
      async () => (await now()) === want,
      15_000,
    );
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal(await now(), want, "and they stay");
    }
    const log = [...cluster.mgr.stderr, ...cluster.cellapps.flatMap((c) => c.stderr), ...base.proc.stderr].join("\n");
    assert.doesNotMatch(log, /fenced|Dropped \d+ cell/, "no member fenced or emptied for the cellappmgr's own stall");
    assert.deepEqual(closed, [], "the players' connections stayed up");
    for (const p of players) p.close();
  });
}
