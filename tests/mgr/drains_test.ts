/** An operator's drains (POST /api/cellapps/:id/retire) go on across a cellappmgr restart, and end with the cellapp. */
import { type Db, openDenoKv } from "../../core/db/mod.ts";
import assert from "node:assert/strict";
import type { CellAppMgr } from "../../mgr/cellappmgr.ts";
import { loadDrains, saveDrains } from "../../mgr/balance/drains.ts";
import { type Channel, dial, MgrMsg, type RegisterInfo, WireServer } from "../../core/wire/mod.ts";
import { memoryLogger } from "../../testing/log.ts";
import { waitFor } from "../../testing/wait.ts";
import { playAlong } from "../helpers/fake_member.ts";
import { startMgr } from "../helpers/mgr.ts";

function startMgrOn(kv: Db, rejoinWindowMs = 300): Promise<CellAppMgr> {
  return startMgr({ kv, rejoinWindowMs });
}

/** A fake cellapp that registers as `previousId` (null: new). */
async function cellapp(
  mgr: CellAppMgr,
  previousId: number | null,
): Promise<{ ch: Channel; id: number; close(): void }> {
  const handlers = playAlong("cellapp");
  const server = new WireServer({ host: "127.0.0.1", port: 0, role: "cellapp", handlers });
  const ch = await dial(mgr.address, {
    role: "cellapp",
    address: server.address,
    handlers,
    heartbeatPayload: () => ({ load: 0 }),
  });
  const info: RegisterInfo = {
    role: "cellapp",
    pid: Deno.pid,
    address: server.address,
    previousId,
    clientUrl: null,
    startedAt: Date.now(),
    entityIdHighWater: 0,
  };
  const r = await ch.request(MgrMsg.register, info);
  return {
    ch,
    id: r.id,
    close() {
      ch.close("test over");
      server.close();
    },
  };
}

Deno.test("drains are stored; a bad record is refused, logged, and drains nothing", async () => {
  await using kv = await openDenoKv(":memory:");
  const log = memoryLogger();
  assert.deepEqual([...await loadDrains(kv, log)], []);
  await saveDrains(kv, new Set([3, 1]), log);
  assert.deepEqual([...await loadDrains(kv, log)], [1, 3]);
  await kv.set(["cellappmgr", "draining"], ["x"]);
  assert.deepEqual([...await loadDrains(kv, log)], []);
  assert.ok(log.lines.some((l) => l.includes("not a list of ids")));
  assert.deepEqual([...await loadDrains(null, log)], []);
});

Deno.test("a cellappmgr restarted mid-drain goes on draining the cellapp that comes back; a drain ends with its cellapp", async () => {
  await using kv = await openDenoKv(":memory:");
  const first = await startMgrOn(kv);
  const a = await cellapp(first, null);
  const b = await cellapp(first, null);
  try {
    await waitFor("both registered", () => first.registry.withRole("cellapp").length === 2);
    assert.equal(first.retireCellApp(a.id).retiring, true);
    await waitFor("the drain stored", async () => (await loadDrains(kv, memoryLogger())).has(a.id));
  } finally {
    a.close();
    b.close();
    first.close();
  }
  // The cellapp being drained left with the first cellappmgr: its drain ended, and was stored as ended.
  await waitFor("the drain ended with its cellapp", async () => !(await loadDrains(kv, memoryLogger())).has(a.id));

  // Drained again, then the cellappmgr goes (inside its rejoin window its members' leaving changes nothing, as when
  // it is killed) and starts again: the cellapp comes back with its id, still draining.
  const second = await startMgrOn(kv, 60_000);
  const a2 = await cellapp(second, 7);
  const b2 = await cellapp(second, 8);
  try {
    await waitFor("back", () => second.registry.withRole("cellapp").length === 2);
    second.retireCellApp(7);
    await waitFor("stored", async () => (await loadDrains(kv, memoryLogger())).has(7));
    second.close();
    a2.ch.close("mgr gone");
    b2.ch.close("mgr gone");
    const third = await startMgrOn(kv);
    const a3 = await cellapp(third, 7);
    try {
      assert.ok(third.spaces.draining.has(7), "still draining after the restart");
      assert.equal(third.getCellApp(7).retiring, true);
      // Cellapp 8 did not come back: a stored drain of it would end at the window's end (it had none).
      await waitFor("the rejoin window over", () => third.registry.withRole("cellapp").length === 1, 3000);
      assert.deepEqual([...third.spaces.draining], [7]);
    } finally {
      a3.close();
      third.close();
    }
  } finally {
    a2.close();
    b2.close();
  }
});
