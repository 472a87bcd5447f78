/** A cellapp or baseapp bound to every interface tells the others the address the cellappmgr lists it at. */
import assert from "node:assert/strict";
import { MgrLink } from "../../core/wire/mod.ts";
import { memoryLogger } from "../../testing/log.ts";
import { playAlong } from "../helpers/fake_member.ts";
import { startMgr } from "../helpers/mgr.ts";

function link(mgr: string, address: string): MgrLink {
  return new MgrLink({
    role: "baseapp",
    mgr,
    address,
    handlers: playAlong("baseapp"),
    load: () => 0,
    log: memoryLogger(),
  });
}

Deno.test("a member that announced 0.0.0.0 takes the host the cellappmgr saw it connect from; a named host is kept", async () => {
  const mgr = await startMgr();
  // Nothing listens at these ports: the cellappmgr only lists them.
  const wild = link(mgr.address, "0.0.0.0:4567");
  const named = link(mgr.address, "127.0.0.1:4568");
  try {
    assert.equal(wild.address, "0.0.0.0:4567", "announced until registered");
    await Promise.all([wild.registered, named.registered]);
    assert.equal(wild.address, "127.0.0.1:4567");
    assert.equal(named.address, "127.0.0.1:4568");
    assert.deepEqual(mgr.registry.members.get(wild.id!)?.address, wild.address, "as the cellappmgr lists it");
  } finally {
    await wild.close("test over");
    await named.close("test over");
    mgr.close();
  }
});
