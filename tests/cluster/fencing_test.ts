/**
 * Fencing (docs/faults.md, "Fencing and generations"): a cellapp that stalls past the cellappmgr's dead timeout
 * (SIGSTOP) has its cells given to another; when it wakes it is told it was
 * fenced, drops every cell and entity it held and registers again, empty. No
 * entity is real on two cellapps, and client frames of its dead generation are
 * dropped by the baseapp. Real processes, admin API, SDK client.
 */
import assert from "node:assert/strict";
import { connect } from "../../client/mod.ts";
import { registry } from "../../entities/mod.ts";
import { BaseMsg, dial, Handlers } from "../../core/wire/mod.ts";
import type { CellEntityView, ClusterView, SpaceSummaryView, SpaceView } from "../../core/views.ts";
import { api, Procs } from "../../testing/procs.ts";
import { cellReady, entityAt, startBaseProcess, startCluster } from "../helpers/players.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

async function processes(admin: string): Promise<ClusterView["processes"]> {
  return ((await api(admin, "/api/cluster")).body as ClusterView).processes;
}

async function spacesOf(admin: string): Promise<SpaceSummaryView[]> {
  return ((await api(admin, "/api/spaces")).body as { spaces: SpaceSummaryView[] }).spaces;
}

/** Every real entity id with the cellapps holding it real, over every space and cellapp. */
async function realHolders(admin: string): Promise<Map<number, number[]>> {
  const spaces = await spacesOf(admin);
  const apps = (await processes(admin)).filter((p) => p.role === "cellapp");
  const held = new Map<number, number[]>();
  for (const s of spaces) {
    for (const a of apps) {
      const r = await api(admin, `/api/cellapps/${a.id}/cells/${s.id}`);
      if (r.status !== 200) continue;
      for (const e of (r.body as { entities: CellEntityView[] }).entities) {
        if (e.real) held.set(e.id, [...(held.get(e.id) ?? []), a.id]);
      }
    }
  }
  return held;
}

Deno.test(
  "a cellapp stopped past the dead timeout is fenced when it wakes: it drops its cells, registers anew, and its frames are dropped",
  opts,
  async () => {
    await using procs = new Procs();
    const cluster = await startCluster(procs, { cellapps: 2 });
    const { proc: baseProc, clientUrl } = await startBaseProcess(procs, cluster);
    await waitFor("both cellapps", async () => (await processes(cluster.admin)).length === 4);
    const made = await api(cluster.admin, "/api/spaces", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ bounds: [0, 0, 200, 100], cells: 2, entities: [{ type: "NPC", count: 40 }] }),
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const spaceId = (made.body as { id: number }).id;
    const space = (await api(cluster.admin, `/api/spaces/${spaceId}`)).body as SpaceView;
    const border = (space.tree as { at: number }).at;
    const client = await connect(clientUrl, {
      name: "sleeper",
      password: "pw",
      spaceId,
      position: { x: border - 30, y: 0, z: 50 },
    }, { registry });
    try {
      await cellReady(client);
      const real = (await entityAt(cluster.admin, client.player.id))!;
      const before = (await processes(cluster.admin)).find((p) => p.id === real.cellapp)!;
      assert.ok(before.generation, "a cellapp has a generation");
      const stopped = cluster.cellapps.find((p) => p.pid === before.pid)!;
      const heldBefore = [...(await realHolders(cluster.admin)).values()].filter((a) => a[0] === before.id).length;
      assert.ok(heldBefore > 1, `the cellapp to stop holds reals (${heldBefore})`);

      stopped.kill("SIGSTOP");
      try {
        await waitFor(
          "the cellappmgr to declare the stopped cellapp dead",
          async () => !(await processes(cluster.admin)).some((p) => p.pid === before.pid),
          10_000,
        );
        await waitFor(
          "the baseapp told of the dead generation",
          () =>
            baseProc.stderr.some((l) => l.includes(`generation ${before.generation}`) && l.includes("declared dead")),
        );
      } finally {
        stopped.kill("SIGCONT");
      }

      const after = await waitFor("the woken cellapp registered anew", async () => {
        const p = (await processes(cluster.admin)).find((p) => p.pid === before.pid);
        return p && p.generation !== before.generation ? p : null;
      }, 10_000);
      assert.ok(after.generation! > before.generation!, "a later generation");
      assert.notEqual(after.id, before.id, "a new member, not the old one back");
      assert.deepEqual(after.cells, [], "it holds no cell");
      assert.ok(
        stopped.stderr.some((l) => l.includes("fenced:") && l.includes("registering again as a new, empty cellapp")),
        stopped.stderr.slice(-20).join("\n"),
      );
      for (const s of await spacesOf(cluster.admin)) {
        const r = await api(cluster.admin, `/api/cellapps/${after.id}/cells/${s.id}`);
        assert.equal(r.status, 404, `space ${s.id} on the fenced cellapp: ${JSON.stringify(r.body)}`);
      }
      const twice = [...(await realHolders(cluster.admin))].filter(([, apps]) => apps.length > 1);
      assert.deepEqual(twice, [], "no entity real on two cellapps");

      // What the stale process would still send for the player's client, from its address and dead generation.
      const base = (await processes(cluster.admin)).find((p) => p.role === "baseapp")!;
      const stale = await dial(base.address, {
        role: "cellapp",
        address: before.address,
        handlers: new Handlers(),
        heartbeatPayload: () => ({ load: 0 }),
      });
      try {
        stale.send(BaseMsg.toClient, client.player.id, 0, new Uint8Array([1, 2, 3]), before.generation!);
        await waitFor(
          "the stale frame dropped by the baseapp",
          () =>
            baseProc.stderr.some((l) =>
              l.includes(`dropped a frame for the client of entity ${client.player.id}`) &&
              l.includes(`generation ${before.generation} was declared dead`)
            ),
        );
        assert.ok(stale.isOpen, "a frame of a dead generation is dropped, not a protocol violation");
      } finally {
        stale.close("test over");
      }
    } finally {
      client.close();
    }
  },
);

Deno.test(
  "a cellapp that stalls for less than the dead timeout stops ticking, is confirmed by a ping, and ticks on as it was",
  opts,
  async () => {
    await using procs = new Procs();
    const cluster = await startCluster(procs, { mgrFlags: ["--npcs=5"] });
    const [cellapp] = cluster.cellapps;
    const before = (await processes(cluster.admin)).find((p) => p.pid === cellapp.pid)!;
    cellapp.kill("SIGSTOP");
    try {
      // Past half the dead timeout (when it stops trusting its link), well short of the timeout itself.
      await new Promise((r) => setTimeout(r, 1300));
    } finally {
      cellapp.kill("SIGCONT");
    }
    await waitFor("its cells stopped and then confirmed", () => {
      const stop = cellapp.stderr.findIndex((l) => l.includes("stop ticking until it confirms them"));
      return stop >= 0 && cellapp.stderr.slice(stop).some((l) => l.includes("confirmed this cellapp again"));
    });
    const after = (await processes(cluster.admin)).find((p) => p.pid === cellapp.pid)!;
    assert.equal(after.generation, before.generation, "still the same registration");
    assert.ok(!cellapp.stderr.some((l) => l.includes("fenced")), "not fenced");
  },
);
