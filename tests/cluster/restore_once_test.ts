/**
 * A restore never doubles an entity: a backup of an NPC that is real on a live cellapp (it moved there after the
 * backup) is not restored elsewhere. The backup is sent by a cellapp of the test's own, as a buddy would.
 */
import assert from "node:assert/strict";
import { CellMsg, dial, MgrMsg, RestoreMsg, WireServer } from "../../core/wire/mod.ts";
import type { CellEntityView, SpaceView } from "../../core/views.ts";
import { encodeCellBackup, PropertyContainer } from "../../core/def/mod.ts";
import { registry } from "../../entities/mod.ts";
import { startCluster } from "../helpers/players.ts";
import { api, Procs } from "../../testing/procs.ts";
import { playAlong } from "../helpers/fake_member.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test("a backup of an entity that is real on a live cellapp is not restored a second time", opts, async () => {
  await using procs = new Procs();
  const cluster = await startCluster(procs, { cellapps: 2 });
  const res = await api(cluster.admin, "/api/spaces", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ bounds: [-200, -200, 200, 200], cells: 2, entities: [{ type: "NPC", count: 10 }] }),
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  const spaceId = (res.body as { id: number }).id;
  const space = (await api(cluster.admin, `/api/spaces/${spaceId}`)).body as SpaceView;
  const [a, b] = space.cells;
  const realsOn = async (cellapp: number) =>
    ((await api(cluster.admin, `/api/cellapps/${cellapp}/cells/${spaceId}`)).body as { entities: CellEntityView[] })
      .entities.filter((e) => e.real);
  const npc = (await realsOn(a.cellapp))[0];
  assert.ok(npc, "an NPC on the first cellapp");

  // A cellapp of the test's own: it answers what the cellappmgr asks a cellapp, and holds nothing.
  const handlers = playAlong("cellapp").on(CellMsg.findEntity, () => null);
  const server = new WireServer({ host: "127.0.0.1", port: 0, role: "cellapp", handlers });
  const ch = await dial(cluster.mgrAddress, {
    role: "cellapp",
    address: server.address,
    handlers,
    heartbeatPayload: () => ({ load: 0 }),
  });
  try {
    await ch.request(MgrMsg.register, {
      role: "cellapp",
      pid: Deno.pid,
      address: server.address,
      previousId: null,
      clientUrl: null,
      startedAt: Date.now(),
      entityIdHighWater: 0,
    });
    // Its backup puts it in the middle of the other cellapp's cell.
    const [minX, minZ, maxX, maxZ] = b.rect;
    const position: [number, number, number] = [(minX + maxX) / 2, 0, (minZ + maxZ) / 2];
    const backup = {
      spaceId,
      epoch: 0,
      entity: {
        id: npc.id,
        type: "NPC",
        position,
        direction: [0, 0, 0] as [number, number, number],
        isOnGround: false,
        props: encodeCellBackup(new PropertyContainer(registry.find("NPC")!, "cell")),
        controllers: [],
        nextControllerId: 1,
      },
    };
    const where = await ch.request(RestoreMsg.restoreCellEntity, backup, null, false);
    assert.equal(where.cellapp, a.cellapp, "it is where it is real");
    assert.ok(!(await realsOn(b.cellapp)).some((e) => e.id === npc.id), "and nowhere else");
    assert.equal((await realsOn(a.cellapp)).filter((e) => e.id === npc.id).length, 1);
  } finally {
    ch.close("test over");
    server.close();
  }
});
