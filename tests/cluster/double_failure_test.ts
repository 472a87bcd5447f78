/**
 * A double failure: a cellapp dies together with its buddy, which held the only backups of its NPCs. Those NPCs are
 * lost for good, and the cellappmgr says so once per space, with how many, of which types and why; the buddy's own
 * NPCs come back from the third cellapp.
 */
import assert from "node:assert/strict";
import type { ClusterView, SpaceView } from "../../core/views.ts";
import { api, Procs } from "../../testing/procs.ts";
import { startCluster } from "../helpers/players.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const NPCS = 45;

async function space(admin: string, id: number): Promise<SpaceView> {
  return (await api(admin, `/api/spaces/${id}`)).body as SpaceView;
}

/** Reals of space `id` on each cellapp, as last reported. */
async function realsByCellApp(admin: string, id: number): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for (const c of (await space(admin, id)).cells) out.set(c.cellapp, (out.get(c.cellapp) ?? 0) + c.reals);
  return out;
}

Deno.test(
  "a cellapp killed with its buddy: the cellappmgr logs once per space how many NPCs were lost, of which type, and why",
  opts,
  async () => {
    await using procs = new Procs();
    const cluster = await startCluster(procs, { cellapps: 3 });
    const ids: number[] = [];
    for (let i = 0; i < 2; i++) {
      const made = await api(cluster.admin, "/api/spaces", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ bounds: [0, 0, 300, 100], cells: 3, entities: [{ type: "NPC", count: NPCS }] }),
      });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      ids.push((made.body as { id: number }).id);
    }
    const processes = ((await api(cluster.admin, "/api/cluster")).body as ClusterView).processes;
    const cellapps = processes.filter((p) => p.role === "cellapp").sort((a, b) => a.id - b.id);
    assert.equal(cellapps.length, 3);
    // The buddy of each cellapp is the next one by id (mgr/buddies.ts): kill the first and its buddy.
    const [victim, buddy, survivor] = cellapps;
    for (const id of ids) {
      await waitFor(`space ${id} on every cellapp, with every NPC reported`, async () => {
        const held = await realsByCellApp(cluster.admin, id);
        return held.size === 3 && [...held.values()].reduce((a, b) => a + b, 0) === NPCS && held.get(victim.id)! > 0;
      }, 15_000);
    }
    // A backup period for the buddies to hold a backup of every NPC.
    await waitFor(
      "the buddies told",
      () => cluster.cellapps.every((c) => c.stderr.some((l) => l.includes("buddy cellapp"))),
    );
    await new Promise((r) => setTimeout(r, 1500));
    const before = new Map<number, Map<number, number>>();
    for (const id of ids) before.set(id, await realsByCellApp(cluster.admin, id));

    const kill = [victim, buddy].map((p) => cluster.cellapps.find((c) => c.pid === p.pid)!);
    for (const p of kill) p.kill("SIGKILL");
    await Promise.all(kill.map((p) => p.status));

    const lines = (id: number) =>
      cluster.mgr.stderr.filter((l) => l.includes(`space ${id} lost`) && l.includes("for good"));
    for (const id of ids) {
      const line = await waitFor(`the loss in space ${id} logged`, () => lines(id)[0], 10_000);
      const m = /space (\d+) lost (\d+) entities for good with cellapp (\d+) \((\d+) NPC\): (.*)$/.exec(line);
      assert.ok(m, line);
      console.log(line.slice(line.indexOf("space ")));
      assert.equal(Number(m[3]), victim.id, line);
      assert.equal(m[2], m[4], "all of them NPCs");
      // As last reported: an NPC may have wandered across a border since.
      const had = before.get(id)!.get(victim.id)!;
      assert.ok(Math.abs(Number(m[2]) - had) <= 3, `${m[2]} lost; cellapp ${victim.id} held ${had}`);
      // Whichever death the cellappmgr hears first, the reason names the buddy that died with it.
      assert.match(m[5], new RegExp(`cellapp ${buddy.id}\\b`), "why: its buddy died with it");
    }
    // The buddy's NPCs come back on the survivor; the victim's do not, and nothing else is said lost.
    for (const id of ids) {
      const lost = Number(/ lost (\d+) /.exec(lines(id)[0])![1]);
      await waitFor(`space ${id} on the survivor with every NPC but the lost`, async () => {
        const s = await space(cluster.admin, id);
        const n = s.cells.reduce((a, c) => a + c.reals, 0);
        return s.cells.every((c) => c.cellapp === survivor.id) && n === NPCS - lost;
      }, 15_000);
    }
    for (const id of ids) assert.equal(lines(id).length, 1, `logged once for space ${id}`);
    assert.ok(!cluster.mgr.stderr.some((l) => l.includes(`with cellapp ${buddy.id} (`)), "the buddy's NPCs not lost");
  },
);
