/**
 * BigWorld's checkForShutDown on the cellappmgr: a space that has never held
 * an entity is still being set up, and a cell's request to shut it down is
 * refused until the cellappmgr has heard that it had entities.
 */
import assert from "node:assert/strict";
import { dial, MgrMsg, WireServer } from "../../core/wire/mod.ts";
import type { SpaceView } from "../../core/views.ts";
import { api, Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";
import { playAlong } from "../helpers/fake_member.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test("a cell cannot shut down a space that never had entities; once it has had some, it can", opts, async () => {
  await using procs = new Procs();
  const mgr = await procs.start(["--role=mgr", "--port=0", "--admin-port=0", "--npcs=0"]);
  const admin = mgr.ready.admin!;
  // A cellapp of our own, so that the test decides what its cells report and ask.
  const handlers = playAlong("cellapp");
  const server = new WireServer({ host: "127.0.0.1", port: 0, role: "cellapp", handlers });
  const ch = await dial(mgr.ready.address!, {
    role: "cellapp",
    address: server.address,
    handlers,
    heartbeatPayload: () => ({ load: 0 }),
  });
  try {
    const { id: cellapp } = await ch.request(MgrMsg.register, {
      role: "cellapp",
      pid: Deno.pid,
      address: server.address,
      previousId: null,
      clientUrl: null,
      startedAt: Date.now(),
      entityIdHighWater: 0,
    });
    const created = await api(admin, "/api/spaces", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ bounds: [0, 0, 100, 100], cells: 1 }),
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const spaceId = (created.body as { id: number }).id;
    const space = (await api(admin, `/api/spaces/${spaceId}`)).body as SpaceView;
    assert.equal(space.cells[0].cellapp, cellapp);

    const report = (hadEntities: boolean) => ({
      load: 0,
      cells: [{
        spaceId,
        cellId: space.cells[0].id,
        reals: 0,
        ghosts: 0,
        tickRate: 10,
        tickMsP50: 0,
        tickMsP99: 0,
        load: 0,
        offloadsIn: 0,
        offloadsOut: 0,
        hadEntities,
      }],
    });
    ch.send(MgrMsg.loadReport, report(false));
    ch.send(MgrMsg.requestShutDownSpace, spaceId, "the space is empty");
    // A request answered after them on the same channel: both were handled by then.
    await ch.request(MgrMsg.allocateIds, 1);
    assert.equal((await api(admin, `/api/spaces/${spaceId}`)).status, 200, "the space never had entities: it stays");
    await waitFor("the refusal logged", () => mgr.stderr.some((l) => /has not had any entities; not shutting/.test(l)));

    ch.send(MgrMsg.loadReport, report(true));
    ch.send(MgrMsg.requestShutDownSpace, spaceId, "the space is empty");
    await ch.request(MgrMsg.allocateIds, 1);
    assert.equal((await api(admin, `/api/spaces/${spaceId}`)).status, 404, "an emptied space shuts down");
  } finally {
    ch.close("test over");
    server.close();
  }
});
