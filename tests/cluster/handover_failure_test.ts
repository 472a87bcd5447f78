/**
 * A hand-over whose target cellapp dies: the player's real stays alive on the
 * side it was on (real processes, SDK client), and its client keeps playing.
 */
import assert from "node:assert/strict";
import { connect } from "../../client/mod.ts";
import { registry } from "../../entities/mod.ts";
import type { SpaceView } from "../../core/views.ts";
import { api, Procs } from "../../testing/procs.ts";
import { cellReady, entityAt, startBaseProcess, startCluster } from "../helpers/players.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test("an offload whose target cellapp dies mid hand-over leaves the entity real and alive", opts, async () => {
  await using procs = new Procs();
  const cluster = await startCluster(procs, { cellapps: 2, cellFlags: ["--aoi-radius=40", "--ghost-radius=60"] });
  const { clientUrl } = await startBaseProcess(procs, cluster, ["--max-speed=1000"]);
  const made = await api(cluster.admin, "/api/spaces", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ bounds: [0, 0, 200, 100], cells: 2 }),
  });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const spaceId = (made.body as { id: number }).id;
  const space = (await api(cluster.admin, `/api/spaces/${spaceId}`)).body as SpaceView;
  const border = (space.tree as { at: number }).at;
  const client = await connect(clientUrl, {
    name: "runner",
    password: "pw",
    spaceId,
    position: { x: border - 10, y: 0, z: 50 },
  }, {
    registry,
  });
  try {
    await cellReady(client);
    const start = (await entityAt(cluster.admin, client.player.id))!;
    // Its ghost must exist on the other side before it can move there.
    await waitFor(
      "its ghost on the other cellapp",
      async () => (await entityAt(cluster.admin, client.player.id))!.ghosts.length > 0,
    );
    const cellappPids = await Promise.all(
      cluster.cellapps.map(async (p) => ({ p, id: await idOf(cluster.admin, p.pid) })),
    );
    const other = cellappPids.find((c) => c.id !== start.cellapp)!.p;
    // Freeze the target: the hand-over request goes out and is never answered; then the target dies.
    other.kill("SIGSTOP");
    client.move({ x: border + 20, y: 0, z: 50 });
    await waitFor(
      "the move applied on the old side",
      async () => (await entityAt(cluster.admin, client.player.id))?.position[0] === border + 20,
    );
    await new Promise((r) => setTimeout(r, 300)); // the offload is now in flight towards the frozen cellapp
    other.kill("SIGKILL");
    await other.status;
    const after = await waitFor("the entity real again where it was", async () => {
      const e = await entityAt(cluster.admin, client.player.id);
      return e && e.cellapp === start.cellapp ? e : null;
    }, 10_000);
    assert.equal(after.spaceId, spaceId);
    const source = cellappPids.find((c) => c.id === start.cellapp)!.p;
    await waitFor(
      "the failed hand-over in the source's log",
      () => source.stderr.some((l) => l.includes(`${client.player.id} stays real`) && l.includes("failed")),
    );
    // Still alive and controlled by its client.
    client.move({ x: border + 22, y: 0, z: 51 });
    await waitFor("a later move", async () => {
      const e = await entityAt(cluster.admin, client.player.id);
      return e?.position[0] === border + 22 && e.position[2] === 51;
    });
  } finally {
    client.close();
  }
});

async function idOf(admin: string, pid: number): Promise<number> {
  const p = ((await api(admin, "/api/cluster")).body as { processes: { pid: number; id: number }[] }).processes;
  return p.find((x) => x.pid === pid)!.id;
}
