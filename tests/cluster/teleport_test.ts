/**
 * A player teleports to another space with its client attached (real
 * processes, SDK client): its real is made in the destination space, its
 * view is rebuilt there, and its client keeps controlling it.
 */
import assert from "node:assert/strict";
import { connect } from "../../client/mod.ts";
import { registry } from "../../entities/mod.ts";
import { api, Procs } from "../../testing/procs.ts";
import { cellReady, entityAt, seen, startBaseProcess, startCluster, waitForPosition } from "../helpers/players.ts";
import { waitFor } from "../../testing/wait.ts";
import type { SpaceView } from "../../core/views.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test("a teleport to another space works with a client attached", opts, async () => {
  await using procs = new Procs();
  const cluster = await startCluster(procs, { cellapps: 2, cellFlags: ["--aoi-radius=60", "--ghost-radius=80"] });
  const { clientUrl } = await startBaseProcess(procs, cluster, ["--max-speed=1000"]);
  const post = (body: unknown) =>
    api(cluster.admin, "/api/spaces", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const from = await post({
    bounds: [0, 0, 100, 100],
    entities: [{ type: "NPC", count: 2, props: { wanderRadius: 1 } }],
  });
  const to = await post({
    bounds: [0, 0, 100, 100],
    entities: [{ type: "NPC", count: 3, props: { wanderRadius: 1 } }],
  });
  assert.equal(from.status, 201);
  assert.equal(to.status, 201);
  const fromId = (from.body as { id: number }).id, toId = (to.body as { id: number }).id;
  const listOf = async (space: number) => {
    const s = (await api(cluster.admin, `/api/spaces/${space}`)).body as { cells: { cellapp: number }[] };
    const cell = await api(cluster.admin, `/api/cellapps/${s.cells[0].cellapp}/cells/${space}`);
    return (cell.body as { entities: { id: number; type: string }[] }).entities.filter((e) => e.type === "NPC");
  };
  const npcsFrom = await listOf(fromId), npcsTo = await listOf(toId);
  const client = await connect(clientUrl, {
    name: "jumper",
    password: "pw",
    spaceId: fromId,
    position: { x: 50, y: 0, z: 50 },
  }, {
    registry,
  });
  try {
    await cellReady(client);
    for (const n of npcsFrom) await seen(client, n.id);
    const left: number[] = [];
    client.on("leave", (id) => left.push(id));
    client.callCell(null, "travel", toId, 40, 40);
    await waitFor(
      "the player in the other space",
      async () => (await entityAt(cluster.admin, client.player.id))?.spaceId === toId,
    );
    const where = (await entityAt(cluster.admin, client.player.id))!;
    assert.deepEqual([where.position[0], where.position[2]], [40, 40]);
    for (const n of npcsTo) await seen(client, n.id);
    await waitFor(
      "the old space's entities to leave the client's view",
      () => npcsFrom.every((n) => left.includes(n.id)),
    );
    assert.ok(npcsFrom.every((n) => !client.entities.has(n.id)));
    // The client still controls its entity, now on the other space's cell.
    client.move({ x: 45, y: 0, z: 42 });
    await waitForPosition(cluster.admin, client.player.id, 45, 42);
    // Exactly one real of the player exists.
    const reals = [...await listAll(cluster.admin, fromId), ...await listAll(cluster.admin, toId)]
      .filter((e) => e.id === client.player.id && e.real);
    assert.equal(reals.length, 1);
  } finally {
    client.close();
  }
});

async function listAll(admin: string, space: number): Promise<{ id: number; real: boolean }[]> {
  const s = (await api(admin, `/api/spaces/${space}`)).body as { cells?: { cellapp: number }[] };
  const out: { id: number; real: boolean }[] = [];
  for (const c of s.cells ?? []) {
    const r = await api(admin, `/api/cellapps/${c.cellapp}/cells/${space}`);
    if (r.status === 200) out.push(...(r.body as { entities: { id: number; real: boolean }[] }).entities);
  }
  return out;
}

Deno.test(
  "teleports across and within a seamless space: the client is told where it landed, its next step is accepted, " +
    "observers that held its ghost keep seeing it",
  opts,
  async () => {
    await using procs = new Procs();
    const cluster = await startCluster(procs, { cellapps: 2, cellFlags: ["--aoi-radius=60", "--ghost-radius=80"] });
    // The default top speed (10 m/s): a teleport's jump must not count as a move.
    const { clientUrl } = await startBaseProcess(procs, cluster);
    const made = await api(cluster.admin, "/api/spaces", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ bounds: [0, 0, 1000, 200], cells: 2 }),
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const spaceId = (made.body as { id: number }).id;
    const space = (await api(cluster.admin, `/api/spaces/${spaceId}`)).body as SpaceView;
    assert.equal(new Set(space.cells.map((c) => c.cellapp)).size, 2, "its cells on both cellapps");
    const border = Math.min(...space.cells.map((c) => c.rect[2]));
    const z = 100;
    const login = (name: string, x: number) =>
      connect(clientUrl, { name, password: "pw", spaceId, position: { x, y: 0, z } }, { registry });
    const player = await login("jumper", border - 10);
    const observer = await login("watcher", border + 15);
    try {
      await cellReady(player);
      await cellReady(observer);
      const copy = await seen(observer, player.player.id); // through its ghost on the observer's cellapp
      const gone: number[] = [];
      observer.on("leave", (id) => gone.push(id));
      const forced: number[][] = [];
      player.on("forcedPosition", (p) => forced.push([p.x, p.y, p.z]));
      const near = (a: number, b: number) => Math.abs(a - b) < 0.1;
      const errors: string[] = [];
      player.on("error", (code, message) => errors.push(`${code} ${message}`));

      // Across the border: the real is made on the other cellapp, where the observer's cell held its ghost.
      const x1 = border + 40;
      player.callCell(null, "travel", spaceId, x1, z);
      await waitFor("the forced position where it landed", () => forced.some((p) => near(p[0], x1) && near(p[2], z)));
      assert.deepEqual([player.player.position.x, player.player.position.z], [x1, z], "the SDK's player is there");
      await waitFor("the observer to see it where it landed", () => near(copy.position.x, x1));
      // The next ordinary step from there is accepted (the speed check moved with it) and seen.
      player.move({ x: x1 + 1, y: 0, z });
      await waitForPosition(cluster.admin, player.player.id, x1 + 1, z);
      await waitFor("the observer to see the step", () => near(copy.position.x, x1 + 1));
      assert.deepEqual(gone, [], "the observer never lost it");
      assert.equal(observer.entities.get(player.player.id), copy, "the same copy all along");

      // Far within its new cell: a move on the spot, told all the same.
      const x2 = x1 + 400;
      player.callCell(null, "travel", spaceId, x2, z);
      await waitFor("the forced position 400 m on", () => forced.some((p) => near(p[0], x2)));
      player.move({ x: x2 + 1, y: 0, z });
      await waitForPosition(cluster.admin, player.player.id, x2 + 1, z);
      player.move({ x: x2 + 2, y: 0, z });
      await waitForPosition(cluster.admin, player.player.id, x2 + 2, z);
      assert.deepEqual(errors, [], "no step was refused");
    } finally {
      player.close();
      observer.close();
    }
  },
);
