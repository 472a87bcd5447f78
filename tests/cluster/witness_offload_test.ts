/**
 * A player walks across the border of a space split over two cellapps (real processes, SDK clients): its real moves
 * to the other cellapp with its witness, and its client notices nothing: no leave of the player it sees, that
 * player's changes in order without a gap, and its own moves still accepted.
 */
import assert from "node:assert/strict";
import { type Client, connect } from "../../client/mod.ts";
import { registry } from "../../entities/mod.ts";
import type { SpaceView } from "../../core/views.ts";
import { api, Procs } from "../../testing/procs.ts";
import { cellReady, entityAt, seen, startBaseProcess, startCluster } from "../helpers/players.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test("a player crossing to another cellapp keeps its view and its order of updates", opts, async () => {
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
  const tree = space.tree as { axis: string; at: number };
  assert.equal(tree.axis, "x");
  const border = tree.at;
  const join = (name: string, x: number): Promise<Client> =>
    connect(clientUrl, { name, password: "pw", spaceId, position: { x, y: 0, z: 50 } }, { registry });
  const a = await join("walker", border - 10);
  const b = await join("stayer", border + 15);
  await cellReady(a);
  await cellReady(b);
  const start = (await entityAt(cluster.admin, a.player.id))!;
  assert.equal(start.spaceId, spaceId);
  const bAtA = await seen(a, b.player.id);

  const left: number[] = [];
  const counters: number[] = [];
  a.on("leave", (id) => left.push(id));
  a.on("property", (e, name, value) => {
    if (e.id === b.player.id && name === "counter") counters.push(value as number);
  });
  // B raises its counter all along; A walks across the border in 2 m steps, well past the offload hysteresis.
  let raised = 0;
  const raising = setInterval(() => {
    b.callCell(null, "raiseCounter");
    raised++;
  }, 40);
  try {
    for (let x = border - 8; x <= border + 24; x += 2) {
      a.move({ x, y: 0, z: 50 });
      await waitFor(`A at x=${x}`, async () => (await entityAt(cluster.admin, a.player.id))?.position[0] === x);
    }
    // A fast walk may be over before B raised much: some raises must have crossed with it.
    await waitFor("B to have raised its counter 10 times", () => raised >= 10);
  } finally {
    clearInterval(raising);
  }
  const moved = await waitFor("A real on the other cellapp", async () => {
    const e = await entityAt(cluster.admin, a.player.id);
    return e && e.cellapp !== start.cellapp ? e : null;
  });
  // Read mid-hand-over, the old copy may still be the fenced real, not yet the ghost it becomes.
  const settled = await waitFor("A's old copy a ghost of the new real", async () => {
    const e = await entityAt(cluster.admin, a.player.id);
    return e && e.cellapp === moved.cellapp && e.ghosts.includes(start.cellapp) ? e : null;
  });
  assert.ok(settled.ghosts.includes(start.cellapp), "and a ghost where it was");
  // Its moves are still accepted where it is now.
  a.move({ x: border + 20, y: 0, z: 52 });
  await waitFor("A's last move applied", async () => {
    const e = await entityAt(cluster.admin, a.player.id);
    return e?.position[0] === border + 20 && e.position[2] === 52;
  });
  await waitFor(`B's counter ${raised} at B`, () => b.player.props.counter === raised);
  await waitFor(`B's counter ${raised} at A`, () => bAtA.props.counter === raised);
  assert.deepEqual(left, [], "A never saw B leave");
  assert.ok(a.entities.get(b.player.id) === bAtA, "the same entity all along (no re-enter)");
  const base = counters[0];
  assert.deepEqual(counters, counters.map((_, i) => base + i), `B's counter at A, in order without gaps`);
  assert.equal(counters.at(-1), raised);
  a.close();
  b.close();
});
