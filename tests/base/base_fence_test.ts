/**
 * The baseapp's hold-back (base/cluster/base_fence.ts): after a stall, noticed where it acts, lifted by the cellappmgr's word; and
 * while its lease (core/wire/lease.ts) is lapsed, against a real cellappmgr in this process, with what its bases send
 * their cells (over real channels) waiting in order until it is confirmed, old client input refused.
 */
import assert from "node:assert/strict";
import { BaseAuthority, heldBackPeers, HeldBackRoute } from "../../base/cluster/base_fence.ts";
import { CellMsg, Handlers, MgrLease, MgrLink, Peers, readMoves, WireServer } from "../../core/wire/mod.ts";
import { makePose } from "../../core/geo/mod.ts";
import { memoryLogger } from "../../testing/log.ts";
import { playAlong } from "../helpers/fake_member.ts";
import { startMgr } from "../helpers/mgr.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

/** Blocks the event loop for `ms`, as a SIGSTOP or a long pause does. */
function stall(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) { /* busy */ }
}

Deno.test("after a stall a baseapp acts again only once the cellappmgr confirms it, and never once fenced", async () => {
  // No channel: the registration that follows decides, as after a SIGCONT whose link was closed meanwhile.
  const link = { deadAfterMs: 400, channel: null } as unknown as MgrLink;
  const log = memoryLogger();
  const authority = new BaseAuthority(link, new MgrLease(link, 0, log, "baseapp"), log);
  try {
    assert.equal(authority.mayAct(), true);
    await authority.confirmed();

    stall(300);
    // Checked before any timer ran: the first callback after waking must not act.
    assert.equal(authority.mayAct(), false, "held back after a stall of over half the dead timeout");
    let confirmed = false;
    const waiting = authority.confirmed().then(() => (confirmed = true));
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(confirmed, false, "waits for the cellappmgr's word");
    authority.registered();
    await waiting;
    assert.equal(authority.mayAct(), true);

    stall(300);
    const refused = authority.confirmed();
    authority.fenced("declared dead");
    await assert.rejects(refused, /fenced: declared dead/);

    stall(100);
    assert.equal(authority.mayAct(), true, "a stall under half the dead timeout holds nothing back");
    assert.equal(log.lines.filter((l) => l.includes("stalled")).length, 2, "each stall logged once");
  } finally {
    authority.close();
  }
});

Deno.test(
  "while its lease is lapsed a baseapp holds back what its bases send their cells, in order, until confirmed",
  opts,
  async () => {
    let mgr = await startMgr({ deadAfterMs: 2000 });
    const port = Number(mgr.address.split(":").pop());
    const log = memoryLogger();
    // A cellapp of the test's own, taking what the route sends.
    const got: string[] = [];
    const cellapp = new WireServer({
      host: "127.0.0.1",
      port: 0,
      role: "cellapp",
      handlers: new Handlers()
        .on(CellMsg.clientCall, (_ch, _caller, _target, _type, method) => void got.push(`call ${method}`))
        .on(CellMsg.clientPosition, (_ch, _id, pos) => void got.push(`move ${pos[0]}`))
        .on(CellMsg.clientMoves, (_ch, _unused, records) => {
          readMoves(records, (_id, p) => (got.push(`move ${p.x}`), true));
        }),
    });
    const link = new MgrLink({
      role: "baseapp",
      mgr: mgr.address,
      address: "127.0.0.1:4597",
      handlers: playAlong("baseapp"),
      load: () => 0,
      log,
    });
    const lease = new MgrLease(link, null, log, "baseapp");
    const authority = new BaseAuthority(link, lease, log, () => 1);
    link.onRegistered = () => authority.registered();
    const peers = new Peers({ role: "baseapp", address: "127.0.0.1:4597" }, log);
    const route = new HeldBackRoute(authority, heldBackPeers(authority, peers), log, 1000);
    const refused: string[] = [];
    route.refuse = (m) => refused.push(m);
    route.setAddress(cellapp.address);
    const call = (method: number) =>
      route.send(CellMsg.clientCall, 7, 7, 1, method, new Uint8Array([0x90]), "127.0.0.1:4597", 1, false);
    try {
      await link.registered;
      await waitFor("the baseapp confirmed", () => authority.mayAct());
      call(1);
      await waitFor("a call sent at once while acting", () => got.length === 1);

      // The cellappmgr goes: the lease ends with its channel.
      mgr.close();
      await waitFor("the lease lapsed", () => !authority.mayAct(), 1000);
      await waitFor("the lapse logged", () => log.lines.some((l) => l.includes("lease lapsed")), 1000);
      call(2);
      route.sendMove(7, makePose(2));
      await new Promise((r) => setTimeout(r, 1100));
      call(3);
      route.sendMove(7, makePose(3));
      await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(got, ["call 1"], "nothing sent while the lease is lapsed");
      assert.equal(authority.mayAct(), false);

      // A cellappmgr back on the port takes the registration again: what waited goes, but for old client input.
      mgr = await startMgr({ deadAfterMs: 2000, port });
      await waitFor("the baseapp confirmed again", () => authority.mayAct(), 10_000);
      await waitFor("what waited sent", () => got.length === 3, 2000).catch((e) => {
        throw new Error(`${e.message}: got ${got.join(", ")}; refused ${refused.join(", ")}`, { cause: e });
      });
      assert.deepEqual(got, ["call 1", "call 3", "move 3"], "in order; held back over 1000 ms: refused");
      assert.equal(refused.length, 1, "the client is told once");
      assert.match(refused[0], /2 input\(s\) of this client were held back for more than 1000 ms/);
      const lines = log.lines.join("\n");
      assert.equal(lines.match(/lease lapsed/g)?.length, 1, "the lapse logged once");
      assert.match(lines, /lease lapsed: the link to the cellappmgr closed .*its 1 base\(s\) write nothing/);
      assert.equal(lines.match(/confirmed this baseapp again/g)?.length, 1, "the end logged once");

      // Fenced while lapsed: what waits is dropped, never sent.
      mgr.close();
      await waitFor("lapsed again", () => !authority.mayAct(), 1000);
      call(4);
      const asked = route.request(CellMsg.clientCall, 7, 7, 1, 5, new Uint8Array([0x90]), "127.0.0.1:4597", 1, false);
      authority.fenced("declared dead in the test");
      await assert.rejects(asked, /fenced: declared dead in the test/);
      mgr = await startMgr({ deadAfterMs: 2000, port });
      await waitFor("acting again as a new member", () => authority.mayAct(), 10_000);
      call(6);
      await waitFor("a new call sent", () => got.length === 4);
      assert.deepEqual(got.slice(3), ["call 6"], "the call held back before the fence never went");
    } finally {
      authority.close();
      lease.stop();
      peers.close("test over");
      cellapp.close("test over");
      await link.close("test over");
      mgr.close();
    }
  },
);
