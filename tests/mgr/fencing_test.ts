/**
 * The cellappmgr's side of fencing, on a real CellAppMgr with real channels:
 * a cellapp registering with a generation it declared dead, or one still
 * registered on another connection, is fenced; one from an earlier run
 * rejoins; the other members hear of each dead generation.
 */
import assert from "node:assert/strict";
import { type Channel, dial, MgrMsg, ProcMsg, type RegisterInfo, RestoreMsg, WireServer } from "../../core/wire/mod.ts";
import { memoryLogger } from "../../testing/log.ts";
import { startMgr } from "../helpers/mgr.ts";
import { waitFor, within } from "../../testing/wait.ts";
import { playAlong } from "../helpers/fake_member.ts";
import { DEAD_KEPT } from "../../mgr/registry.ts";

/** A member's listening address and the channels it opens to the cellappmgr. */
class Member implements Disposable {
  readonly server: WireServer;
  // A member plays along with what the cellappmgr tells every cellapp.
  readonly handlers = playAlong("cellapp", playAlong("baseapp"));
  readonly channels: Channel[] = [];

  constructor(readonly role: "cellapp" | "baseapp") {
    this.server = new WireServer({ host: "127.0.0.1", port: 0, role, handlers: this.handlers });
  }

  async dial(mgr: string): Promise<Channel> {
    const ch = await dial(mgr, {
      role: this.role,
      address: this.server.address,
      handlers: this.handlers,
      heartbeatPayload: () => ({ load: 0 }),
    });
    this.channels.push(ch);
    return ch;
  }

  info(generation: number | null): RegisterInfo {
    return {
      role: this.role,
      pid: Deno.pid,
      address: this.server.address,
      previousId: null,
      clientUrl: null,
      startedAt: Date.now(),
      entityIdHighWater: 0,
      generation,
    };
  }

  [Symbol.dispose](): void {
    for (const ch of this.channels) ch.close("test over");
    this.server.close();
  }
}

Deno.test("a cellapp back with a dead generation, or one registered elsewhere, is fenced; an earlier run's rejoins", async () => {
  const mgr = await startMgr();
  try {
    using base = new Member("baseapp");
    const fencedHeard: number[] = [];
    base.handlers.on(ProcMsg.fenced, (_ch, _id, generation) => void fencedHeard.push(generation));
    await (await base.dial(mgr.address)).request(MgrMsg.register, base.info(null));

    using cell = new Member("cellapp");
    const first = await cell.dial(mgr.address);
    const r1 = await first.request(MgrMsg.register, cell.info(null));
    assert.equal(r1.fenced, null);
    assert.ok(r1.generation! >= mgr.registry.firstGeneration);

    // The same process on a second connection, naming the generation of the first: that one is closed.
    const second = await cell.dial(mgr.address);
    const r2 = await second.request(MgrMsg.register, cell.info(r1.generation!));
    assert.match(r2.fenced ?? "", /still registered on another connection/);
    assert.equal(r2.id, 0);
    assert.match(await within("the first connection closed", first.closed), /registered again on another connection/);
    await waitFor("the baseapp told of the dead generation", () => fencedHeard.includes(r1.generation!));

    // Back again with it: declared dead. Registering anew without it is a new member.
    const r3 = await second.request(MgrMsg.register, cell.info(r1.generation!));
    assert.match(r3.fenced ?? "", new RegExp(`generation ${r1.generation} was declared dead`));
    const r4 = await second.request(MgrMsg.register, cell.info(null));
    assert.equal(r4.fenced, null);
    assert.ok(r4.generation! > r1.generation!);
    assert.ok(r4.deadGenerations!.includes(r1.generation!));

    // A generation from before this cellappmgr started belongs to an earlier run: the cellapp rejoins.
    using old = new Member("cellapp");
    const r5 = await (await old.dial(mgr.address)).request(MgrMsg.register, old.info(1));
    assert.equal(r5.fenced, null);
    assert.ok(r5.id > 0);
  } finally {
    mgr.close();
  }
});

Deno.test("a baseapp back with a dead generation is fenced while another baseapp could restore its bases; a lone one is not", async () => {
  const mgr = await startMgr();
  try {
    using a = new Member("baseapp");
    using b = new Member("baseapp");
    const aFirst = await a.dial(mgr.address);
    const ra = await aFirst.request(MgrMsg.register, a.info(null));
    const bFirst = await b.dial(mgr.address);
    const rb = await bFirst.request(MgrMsg.register, b.info(null));
    assert.equal(ra.fenced, null);

    // A is declared dead (its link closed) while B lives: B restored its bases, so A coming back is fenced.
    aFirst.close("declared dead");
    await waitFor("A gone", () => mgr.registry.withRole("baseapp").length === 1);
    const aAgain = await a.dial(mgr.address);
    const back = await aAgain.request(MgrMsg.register, a.info(ra.generation!));
    assert.match(back.fenced ?? "", /was declared dead .* its bases restored on other baseapps/);
    const anew = await aAgain.request(MgrMsg.register, a.info(null));
    assert.equal(anew.fenced, null);
    assert.ok(!anew.deadGenerations!.includes(ra.generation!), "no member acts on dead baseapp generations");
    aAgain.close("gone for good");
    await waitFor("A gone again", () => mgr.registry.withRole("baseapp").length === 1);

    // B alone is declared dead: no baseapp held its backups, nothing was restored, and it comes back as it was.
    bFirst.close("declared dead");
    await waitFor("B gone", () => mgr.registry.withRole("baseapp").length === 0);
    const bBack = await (await b.dial(mgr.address)).request(MgrMsg.register, b.info(rb.generation!));
    assert.equal(bBack.fenced, null);
    assert.ok(bBack.id > 0);
  } finally {
    mgr.close();
  }
});

Deno.test("a cellapp that drops during a restarted cellappmgr's rejoin window keeps its cells; gone at its end, it is dead", async () => {
  const log = memoryLogger();
  const mgr = await startMgr({ log, rejoinWindowMs: 4000 });
  try {
    const geometry = (cellapp: number, other: number) => ({
      spaceId: 5,
      bounds: [0, 0, 200, 100] as [number, number, number, number],
      tree: {
        axis: "x" as const,
        at: 100,
        left: { cell: { id: 1, cellapp } },
        right: { cell: { id: 2, cellapp: other } },
      },
      isDefault: false,
      cellapps: [] as [number, string][],
    });
    using a = new Member("cellapp");
    using b = new Member("cellapp");
    using c = new Member("cellapp");
    const died: number[] = [];
    c.handlers.on(RestoreMsg.cellAppDied, (_ch, id) => void died.push(id));
    const back = (m: Member, id: number, generation: number | null) => ({
      ...m.info(generation),
      previousId: id,
      spaces: [geometry(7, 8)],
    });
    // Members of an earlier run come back with space 5 over cellapps 7 and 8; c holds no cell of it.
    const a1 = await a.dial(mgr.address);
    const ra = await a1.request(MgrMsg.register, back(a, 7, 1));
    assert.equal(ra.id, 7);
    const rb = await (await b.dial(mgr.address)).request(MgrMsg.register, back(b, 8, 1));
    assert.equal(rb.id, 8);
    await (await c.dial(mgr.address)).request(MgrMsg.register, { ...c.info(1), previousId: 9, spaces: [] });

    // a loses its connection inside the window, then registers again with the generation it was given: not fenced,
    // and the space is as it was.
    a1.close("lost");
    await waitFor("a gone", () => !mgr.registry.members.has(7));
    assert.ok(log.lines.some((l) => l.includes("cellapp 7 left during the rejoin window")), "inside the window");
    assert.deepEqual(mgr.spaces.all.get(5)!.cellapps(), [7, 8], "its cells wait for it");
    const ra2 = await (await a.dial(mgr.address)).request(MgrMsg.register, back(a, 7, ra.generation!));
    assert.equal(ra2.fenced, null);
    assert.equal(ra2.id, 7);
    // b drops and stays away: at the window's end its cells go and it is announced dead.
    b.channels[0].close("lost");
    await waitFor("b gone", () => !mgr.registry.members.has(8));
    await waitFor(
      "b left inside the window",
      () => log.lines.some((l) => l.includes("8 left during the rejoin window")),
    );
    await waitFor("the window over, b's cell gone", () => mgr.spaces.all.get(5)?.cellapps().join() === "7", 8000);
    await waitFor("c told that b died", () => died.includes(8));
    assert.ok(!died.includes(7), "a, which came back, is not dead");
  } finally {
    mgr.close();
  }
});

Deno.test("the cellappmgr lists only the latest dead cellapp generations; an older one coming back is still fenced", async () => {
  const mgr = await startMgr();
  try {
    using cell = new Member("cellapp");
    // DEAD_KEPT + 8 cellapps that register and go, 32 at a time.
    const generations: number[] = [];
    for (let i = 0; i < DEAD_KEPT + 8; i += 32) {
      await Promise.all(Array.from({ length: Math.min(32, DEAD_KEPT + 8 - i) }, async () => {
        const ch = await cell.dial(mgr.address);
        const r = await ch.request(MgrMsg.register, cell.info(null));
        generations.push(r.generation!);
        ch.close("gone");
        await ch.closed;
      }));
    }
    generations.sort((a, b) => a - b);
    await waitFor("every one of them declared dead", () => mgr.registry.members.size === 0);
    const ch = await cell.dial(mgr.address);
    const fresh = await ch.request(MgrMsg.register, cell.info(null));
    assert.equal(fresh.deadGenerations!.length, DEAD_KEPT);
    assert.deepEqual(fresh.deadGenerations, generations.slice(-DEAD_KEPT));
    // The oldest fell out of the list, and is fenced all the same.
    const back = await (await cell.dial(mgr.address)).request(MgrMsg.register, cell.info(generations[0]));
    assert.match(back.fenced ?? "", new RegExp(`generation ${generations[0]} is not one this cellappmgr knows`));
    assert.equal(back.id, 0);
  } finally {
    mgr.close();
  }
});
