/**
 * A cellapp dies (SIGKILL): the cell entities it held come back from their latest backups on the cellapp now
 * covering their positions: the player's from its base (a baseapp in this process), the NPCs' from the buddy.
 */
import assert from "node:assert/strict";
import { decodeCellBackup } from "../../core/def/mod.ts";
import type { CellEntityView, ClusterView } from "../../core/views.ts";
import { login, startBase, testRegistry } from "../base/fixtures.ts";
import { cellReady, entityAt, seen, startCluster } from "../helpers/players.ts";
import { api, Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

async function realsOn(admin: string, cellapp: number, spaceId: number): Promise<CellEntityView[]> {
  const r = await api(admin, `/api/cellapps/${cellapp}/cells/${spaceId}`);
  if (r.status !== 200) return [];
  return (r.body as { entities: CellEntityView[] }).entities.filter((e) => e.real);
}

Deno.test("a killed cellapp's player and NPCs are restored once each from their last backups", opts, async () => {
  await using procs = new Procs();
  const cluster = await startCluster(procs, { cellapps: 2 });
  await using b = await startBase({}, { cluster });
  const res = await api(cluster.admin, "/api/spaces", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ bounds: [-200, -200, 200, 200], cells: 2, entities: [{ type: "NPC", count: 30 }] }),
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  const spaceId = (res.body as { id: number }).id;

  const c = await login(b.app, { name: "survivor", spaceId, position: { x: -150, y: 0, z: -150 } });
  assert.equal(await cellReady(c), spaceId);
  const id = c.player.id;
  const d = await login(b.app, { name: "neighbour", spaceId, position: { x: -147, y: 0, z: -150 } });
  assert.equal(await cellReady(d), spaceId);
  const dAtC = await seen(c, d.player.id);
  const doomed = (await entityAt(cluster.admin, id))!.cellapp;
  assert.equal((await entityAt(cluster.admin, d.player.id))!.cellapp, doomed);
  const processes = ((await api(cluster.admin, "/api/cluster")).body as ClusterView).processes;
  const cellapps = processes.filter((p) => p.role === "cellapp");
  const survivor = cellapps.find((p) => p.id !== doomed)!.id;
  const doomedProc = cluster.cellapps.find((p) => p.pid === cellapps.find((x) => x.id === doomed)!.pid)!;

  // A change the backups carry: the player's counter.
  c.callCell(null, "raiseCounter");
  await waitFor("the own client to see counter 1", () => c.player.props.counter === 1);
  const keeper = b.app.proxies.get(id)!.cellBackup;
  const avatar = testRegistry.find("Avatar")!;
  await waitFor("a backup at the base with counter 1", () => {
    const l = keeper.latest;
    return l !== null && decodeCellBackup(avatar, l.entity.props, id).view.counter === 1;
  }, 5000);
  // One more period: every NPC has been backed up to the buddy since the space was made.
  const kept = keeper.stats.kept;
  await waitFor("one more backup period", () => keeper.stats.kept > kept, 5000);

  const before = [
    ...await realsOn(cluster.admin, doomed, spaceId),
    ...await realsOn(cluster.admin, survivor, spaceId),
  ].filter((e) => e.type === "NPC");
  const lost = (await realsOn(cluster.admin, doomed, spaceId)).filter((e) => e.type === "NPC");
  assert.ok(lost.length > 0, "the doomed cellapp holds NPCs");
  assert.equal(before.length, 30);

  doomedProc.kill("SIGKILL");
  await waitFor("every entity back, once, on the surviving cellapp", async () => {
    const reals = await realsOn(cluster.admin, survivor, spaceId);
    const ids = reals.map((e) => e.id).sort((x, y) => x - y);
    const want = [...before.map((e) => e.id), id, d.player.id].sort((x, y) => x - y);
    return JSON.stringify(ids) === JSON.stringify(want);
  }, 15_000);
  // Restored where their backups had them (NPCs walk slowly; a backup is at most a period old).
  const after = new Map((await realsOn(cluster.admin, survivor, spaceId)).map((e) => [e.id, e]));
  for (const e of lost) {
    const r = after.get(e.id)!;
    assert.ok(Math.hypot(r.position[0] - e.position[0], r.position[2] - e.position[2]) < 10, `NPC ${e.id} moved far`);
  }

  // The player's client kept its connection and goes on: its counter came back as backed up, and rises again.
  assert.equal(c.player.spaceId, spaceId);
  c.callCell(null, "raiseCounter");
  await waitFor("the own client to see counter 2", () => c.player.props.counter === 2, 10_000);
  // Its view is rebuilt by a witness on the new cellapp: the neighbour's moves reach it again.
  d.move({ x: -146, y: 0, z: -150 }, [0, 0, 0]);
  // (The client made a new view of it when the new witness brought it in again.)
  await waitFor("the neighbour's move seen after the restore", () => {
    const now = c.entities.get(d.player.id);
    return now !== undefined && now !== dAtC && Math.abs(now.position.x + 146) < 0.05;
  }, 10_000);
  c.close();
  d.close();
});
