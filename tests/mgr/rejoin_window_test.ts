import assert from "node:assert/strict";
import { RejoinWindow } from "../../mgr/rejoin.ts";
import { MgrMsg } from "../../core/wire/mod.ts";
import { handshake, open, type Raw } from "../../tools/fuzz/raw_conn.ts";
import { encodeFrame } from "../../tools/fuzz/wire_inputs.ts";
import { waitFor } from "../../testing/wait.ts";
import { startMgr } from "../helpers/mgr.ts";

/** A promise and its resolve, for standing in for a connection's `closed`. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

Deno.test("rejoin window: what waits goes on once it closes, after onClose, in order", async () => {
  const order: string[] = [];
  const w = new RejoinWindow(30, () => order.push("closed"));
  const waits = [1, 2, 3].map((i) => w.wait().then(() => order.push(`waiter ${i}`)));
  assert.equal(w.waiting, 3);
  await Promise.all(waits);
  assert.deepEqual(order, ["closed", "waiter 1", "waiter 2", "waiter 3"]);
  assert.equal(w.waiting, 0);
  // Closed: no wait.
  let passed = false;
  await w.wait().then(() => (passed = true));
  assert.ok(passed);
});

Deno.test("rejoin window: a wait whose connection closes first lets go of it, and at most maxWaiting wait", async () => {
  const w = new RejoinWindow(60_000, () => {}, null, 2);
  try {
    const a = deferred(), b = deferred();
    const first = w.wait(a.promise);
    const second = w.wait(b.promise);
    await assert.rejects(w.wait(), /2 requests wait already/);
    a.resolve();
    await assert.rejects(first, /the connection closed while its request waited/);
    assert.equal(w.waiting, 1);
    // Its place is free again.
    const third = w.wait();
    assert.equal(w.waiting, 2);
    w.reopen(0);
    await Promise.all([second, third]);
    assert.equal(w.waiting, 0);
    // A connection closing after the window did changes nothing.
    b.resolve();
    await Promise.resolve();
    assert.equal(w.waiting, 0);
  } finally {
    w.dispose();
  }
});

Deno.test("cellappmgr: registrations dropped while its rejoin window is open are not kept until it closes", async () => {
  const mgr = await startMgr({ rejoinWindowMs: 60_000 });
  const raws: Raw[] = [];
  try {
    const waiting = async () => Number(/^seamless_mgr_rejoin_waiting\S* (\d+)/m.exec(await mgr.metrics())?.[1] ?? NaN);
    const n = 200;
    for (let i = 0; i < n; i++) {
      const raw = await open(mgr.address);
      assert.ok(raw, "the cellappmgr takes connections");
      raws.push(raw);
      const self = `127.0.0.1:${20_000 + i}`;
      assert.ok(await handshake(raw, "cellapp", self, null), "handshake");
      await raw.write(encodeFrame([MgrMsg.register.kind, 1, {
        role: "cellapp",
        pid: Deno.pid,
        address: self,
        previousId: null,
        clientUrl: null,
        startedAt: Date.now(),
        entityIdHighWater: 0,
      }]));
    }
    // Every registration of a process new to the cluster waits for the window (it is open for a minute).
    await waitFor(`${n} registrations waiting`, async () => (await waiting()) === n, 10_000);
    for (const raw of raws.splice(0, n / 2)) raw.close();
    await waitFor("the closed ones to stop waiting", async () => (await waiting()) === n / 2, 10_000);
  } finally {
    for (const raw of raws) raw.close();
    mgr.close();
  }
});
