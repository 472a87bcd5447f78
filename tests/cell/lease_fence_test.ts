/**
 * The lease of a cellapp on its cells (core/wire/lease.ts) and what it holds back (cell/fence.ts), against a real
 * cellappmgr in this process: held once a ping is answered, cut to a safe length, none with 0, ended at once when
 * the channel closes; while it is lapsed the cells do not tick and what they are asked waits, in order, until the
 * cellappmgr confirms them, or fails when they are dropped.
 */
import assert from "node:assert/strict";
import { MgrLease, MgrLink } from "../../core/wire/mod.ts";
import { Authority, MAX_HELD_BACK_BYTES } from "../../cell/fence.ts";
import { memoryLogger } from "../../testing/log.ts";
import { playAlong } from "../helpers/fake_member.ts";
import { startMgr } from "../helpers/mgr.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

function link(mgr: string, log = memoryLogger()): MgrLink {
  return new MgrLink({
    role: "cellapp",
    mgr,
    address: "127.0.0.1:4599",
    handlers: playAlong("cellapp"),
    load: () => 0,
    log,
  });
}

Deno.test(
  "a lease is held once the cellappmgr answers, is cut to 75% of its dead timeout, and is none with 0",
  opts,
  async () => {
    const mgr = await startMgr({ deadAfterMs: 2000 });
    const log = memoryLogger();
    const l = link(mgr.address, log);
    const auto = new MgrLease(l, null, log);
    const long = new MgrLease(l, 5000, log);
    const none = new MgrLease(l, 0, log);
    try {
      assert.equal(auto.held(), false, "not before an answer");
      assert.equal(none.held(), true, "no lease: always held");
      await l.registered;
      auto.renewNow();
      await waitFor("the lease held", () => auto.held());
      assert.equal(auto.ms, 1200, "60% of the dead timeout");
      assert.equal(long.ms, 1500, "cut to 75%");
      assert.equal(long.ms, 1500, "read again");
      assert.equal(log.lines.filter((x) => x.includes("--mgr-lease=5000 is too long")).length, 1, "warned once");
      assert.equal(none.enabled, false);
    } finally {
      for (const x of [auto, long, none]) x.stop();
      await l.close("test over");
      mgr.close();
    }
  },
);

Deno.test(
  "while the lease is lapsed the cells hold still and what they are asked waits until they are confirmed",
  opts,
  async () => {
    let mgr = await startMgr({ deadAfterMs: 2000 });
    const port = mgr.address.split(":").pop();
    const log = memoryLogger();
    const l = link(mgr.address, log);
    const lease = new MgrLease(l, null, log);
    const authority = new Authority(l, lease, log, () => 1, 1000);
    l.onRegistered = () => authority.registered();
    try {
      await l.registered;
      await waitFor("the cells acting", () => authority.holds(100));
      assert.equal(authority.gate("a call", () => 7), 7, "run at once while acting");

      // The cellappmgr goes: the lease ends with its channel, not a lease later.
      mgr.close();
      await waitFor("the lease ended with the channel", () => !lease.held(), 1000);
      assert.equal(authority.holds(100), false);
      assert.equal(authority.holds(100), false);
      const lapsed = log.lines.filter((x) => x.includes("lease lapsed"));
      assert.equal(lapsed.length, 1, "logged once");
      assert.match(lapsed[0], /the link to the cellappmgr closed .*its 1 cell\(s\) stop acting, keeping their state/);
      const order: string[] = [];
      const old = authority.gate("old", () => order.push("old"));
      const answer = authority.settle("an answer", Promise.resolve("answered"));
      await new Promise((r) => setTimeout(r, 1100));
      const first = authority.gate("first", () => order.push("first"));
      const second = authority.gate("second", () => order.push("second"));
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(order, [], "nothing runs while lapsed");

      // A cellappmgr back on the port takes the registration again: the cells are confirmed and what waited runs.
      mgr = await startMgr({ deadAfterMs: 2000, port: Number(port) });
      await waitFor("the cells confirmed", () => authority.holds(100), 10_000);
      assert.deepEqual(await Promise.all([first, second]), [1, 2]);
      assert.deepEqual(order, ["first", "second"], "in order");
      await assert.rejects(Promise.resolve(old), /old dropped: held back for more than 1000 ms/, "its sender gave up");
      assert.equal(await answer, "answered", "a script's answer is kept however long it waited");
      assert.equal(log.lines.filter((x) => x.includes("confirmed this cellapp again")).length, 1);

      // Dropped (fenced) while lapsed: what waits fails.
      mgr.close();
      await waitFor("lapsed again", () => !authority.holds(100), 1000);
      const late = authority.gate("late", () => "ran");
      // What the held messages' arguments hold is bounded too.
      const big = authority.gate("big", () => "ran", MAX_HELD_BACK_BYTES - 1000);
      await assert.rejects(
        Promise.resolve(authority.gate("one too many", () => "ran", 2000)),
        /one too many refused: this cellapp's cells do not act until the cellappmgr confirms them/,
      );
      assert.equal(log.lines.filter((x) => /the most that may \(10000 messages, 16777216 bytes\)/.test(x)).length, 1);
      authority.dropped("fenced in the test");
      await assert.rejects(Promise.resolve(late), /late dropped: fenced in the test/);
      await assert.rejects(Promise.resolve(big), /big dropped: fenced in the test/);
    } finally {
      lease.stop();
      await l.close("test over");
      mgr.close();
    }
  },
);
