/** Cell backups on one cellapp: spread over the ticks of a period, to the base or the buddy; the buddy's store. */
import assert from "node:assert/strict";
import { createRegistry, decodeCellBackup, defineEntity, T } from "../../core/def/mod.ts";
import { Cell } from "../../cell/cell.ts";
import { BackupSender, BuddyStore, restoreFromBackup, restoreNpcsOf } from "../../cell/backup/mod.ts";
import { CellScript, type CellScriptClass } from "../../core/script.ts";
import type { CellBackup } from "../../core/wire/mod.ts";
import { memoryLogger } from "../../testing/log.ts";
import { loneCell } from "../../testing/lone_cell.ts";

const Walker = defineEntity({
  name: "Walker",
  hasCell: true,
  properties: { steps: { type: T.UINT32, flags: "CELL_PUBLIC" } },
});
const registry = createRegistry({ entities: [Walker] });

function makeCell(scripts: Record<string, CellScriptClass> = {}): Cell {
  return loneCell({ registry, scripts, spaceId: 5, bounds: [-100, -100, 100, 100], isDefault: false }).cell;
}

/** A sender whose backups are recorded as [where, backup], per tick. */
function recordingSender(periodMs = 1000, tickMs = 100) {
  const sent: [string, CellBackup][] = [];
  const sender = new BackupSender(
    {
      toBase: (address, id, backup) => {
        assert.equal(backup.entity.id, id);
        sent.push([address, backup]);
      },
      toBuddy: (address, backup) => void sent.push([`buddy ${address}`, backup]),
    },
    tickMs,
    periodMs,
  );
  return { sent, sender };
}

Deno.test("every real is backed up once per period, a tenth of them each tick at 10 Hz", () => {
  const cell = makeCell();
  for (let i = 0; i < 200; i++) {
    const e = cell.createEntity("Walker", { x: i % 50, y: 0, z: 0 }, { steps: i });
    if (i % 2 === 0) e.baseAddress = "127.0.0.1:7001";
  }
  const { sent, sender } = recordingSender();
  sender.buddy = { id: 2, address: "127.0.0.1:7002" };
  assert.equal(sender.ticksPerPeriod, 10);
  // All are new to the sender: backed up at once (fewer than FRESH_PER_TICK), then spread.
  cell.tick(100);
  assert.equal(sender.tick([cell]), 200);
  for (let t = 1; t < 10; t++) {
    cell.tick(100);
    sender.tick([cell]);
  }
  sent.length = 0;
  sender.stats.toBases = sender.stats.toBuddy = 0;
  const perTick: number[] = [];
  for (let t = 0; t < 20; t++) {
    cell.tick(100);
    perTick.push(sender.tick([cell]));
  }
  assert.deepEqual(perTick, new Array(20).fill(20), "200 reals over 10 ticks: 20 each tick, every tick");
  const times = new Map<number, number>();
  for (const [, b] of sent) times.set(b.entity.id, (times.get(b.entity.id) ?? 0) + 1);
  assert.equal(times.size, 200);
  assert.ok([...times.values()].every((n) => n === 2), "each real twice in two periods");
  assert.equal(sender.stats.toBases, 200);
  assert.equal(sender.stats.toBuddy, 200);
  const [where, b] = sent.find(([, b]) => b.entity.id === 9)!;
  assert.equal(where, "127.0.0.1:7001", "a real with a base goes to its base");
  assert.equal(sent.find(([, b]) => b.entity.id === 8)![0], "buddy 127.0.0.1:7002", "one without goes to the buddy");
  assert.equal(b.spaceId, 5);
});

Deno.test("a backup holds the state at its tick: a changed property, the position, timers; ghosts are not backed up", () => {
  const cell = makeCell();
  const e = cell.createEntity("Walker", { x: 1, y: 2, z: 3 }, { steps: 1 });
  e.baseAddress = "127.0.0.1:7001";
  cell.addTimer(e, 5000, 1000, 42);
  const { sent, sender } = recordingSender(300, 100);
  for (let t = 0; t < 3; t++) sender.tick([cell]);
  assert.equal(sent.length, 2, "at once, being new, then on its tick");
  (e.container.view as { steps: number }).steps = 77;
  cell.moveEntity(e, 10, 0, -4);
  for (let t = 0; t < 3; t++) {
    cell.tick(100);
    sender.tick([cell]);
  }
  assert.equal(sent.length, 3);
  const last = sent[2][1];
  assert.deepEqual(last.entity.position, [10, 0, -4]);
  assert.equal(decodeCellBackup(e.type, last.entity.props, e.id).view.steps, 77);
  const timer = last.entity.controllers.find((c) => (c as { kind: string }).kind === "timer") as Record<string, number>;
  assert.equal(timer.userArg, 42);
  assert.equal(timer.dueInMs, 4800, "backed up at 200 ms of game time (its tick of the period)");
  e.isReal = false; // as a ghost is
  for (let t = 0; t < 3; t++) sender.tick([cell]);
  assert.equal(sent.length, 3);
});

Deno.test("reals new to the cellapp are backed up within a tick or two, a capped number a tick, then spread", () => {
  const cell = makeCell();
  const { sent, sender } = recordingSender(1000, 100);
  sender.buddy = { id: 2, address: "127.0.0.1:7002" };
  for (let i = 0; i < 1000; i++) cell.createEntity("Walker", { x: i % 50, y: 0, z: 0 });
  const perTick: number[] = [];
  const firstAt = new Map<number, number>();
  for (let t = 0; t < 10; t++) {
    cell.tick(100);
    perTick.push(sender.tick([cell]));
    for (const [, b] of sent) if (!firstAt.has(b.entity.id)) firstAt.set(b.entity.id, t);
  }
  // 100 on their own tick and up to FRESH_PER_TICK (200) new ones: a spawn of 1,000 takes 5 ticks, not 1 nor 10.
  assert.ok(perTick.every((n) => n <= 300), `no tick carries them all: ${perTick}`);
  assert.ok([...firstAt.values()].every((t) => t <= 4), "each backed up within 5 ticks");
  assert.equal(firstAt.size, 1000);
  assert.ok(sender.stats.fresh >= 600, `fresh: ${sender.stats.fresh}`);

  // A real that arrives later (a new object here, as an offloaded or restored one is) goes out on the next tick.
  sent.length = 0;
  const late = cell.createEntity("Walker", { x: 0, y: 0, z: 0 });
  cell.tick(100);
  sender.tick([cell]);
  assert.ok(sent.some(([, b]) => b.entity.id === late.id), "the newcomer at once");
  // And otherwise a tenth of the reals a tick again.
  for (let t = 0; t < 10; t++) {
    sent.length = 0;
    cell.tick(100);
    assert.ok(Math.abs(sender.tick([cell]) - 100) <= 1);
  }
  // A ghost turned real in place (an offload here, also of one that had been real here before) has a new epoch.
  const back = [...cell.entities.values()].find((e) => e.id % 10 === 5 && e.id !== late.id)!; // not on the next tick
  back.epoch += 1;
  sent.length = 0;
  cell.tick(100);
  sender.tick([cell]);
  assert.ok(sent.some(([, b]) => b.entity.id === back.id), "the one back by offload at once");
});

Deno.test("without a buddy, reals without a base are counted, not sent", () => {
  const cell = makeCell();
  cell.createEntity("Walker", { x: 0, y: 0, z: 0 });
  const { sent, sender } = recordingSender(100, 100);
  sender.tick([cell]);
  assert.equal(sent.length, 0);
  assert.equal(sender.stats.noBuddy, 1);
});

Deno.test("the buddy store keeps the latest backup per entity and forgets those no longer refreshed", () => {
  let now = 0;
  const store = new BuddyStore(2000, () => now);
  const backup = (id: number, x: number): CellBackup => ({
    spaceId: 3,
    epoch: 0,
    entity: {
      id,
      type: "Walker",
      position: [x, 0, 0],
      direction: [0, 0, 0],
      isOnGround: false,
      props: new Uint8Array(),
      controllers: [],
      nextControllerId: 1,
    },
  });
  store.put("a:1", backup(1, 1));
  store.put("a:1", backup(2, 1));
  store.put("b:1", backup(3, 1));
  now = 1000;
  store.put("a:1", backup(1, 5));
  assert.deepEqual(store.backupsFrom("a:1").map((b) => [b.entity.id, b.entity.position[0]]), [[1, 5], [2, 1]]);
  // Entity 2 went away from a: only 1 is backed up from then on.
  for (now = 2000; now <= 4000; now += 1000) store.put("a:1", backup(1, now));
  assert.deepEqual(store.backupsFrom("a:1").map((b) => b.entity.id), [1]);
  // A stalled sender's last backups stay current: they are what is left of it.
  now = 60_000;
  assert.deepEqual(store.backupsFrom("b:1").map((b) => b.entity.id), [3]);
  assert.deepEqual(store.senders(), ["a:1", "b:1"]);
  store.forget("b:1");
  assert.deepEqual(store.backupsFrom("b:1"), []);
});

Deno.test("an entity restored from its backup keeps its state and timers, hears onRestore, and comes once", () => {
  const heard: string[] = [];
  class Counting extends CellScript<{ steps: number }> {
    override onCreated() {
      heard.push("onCreated");
    }
    override onRestore() {
      heard.push(`onRestore steps=${this.self.props.steps}`);
    }
    override onTimer(_id: number, userArg: number) {
      heard.push(`onTimer ${userArg}`);
    }
  }
  const scripts = { Walker: Counting as unknown as CellScriptClass };
  const old = makeCell(scripts);
  const e = old.createEntity("Walker", { x: 3, y: 0, z: 4 }, { steps: 9 });
  old.addTimer(e, 250, 0, 5);
  e.baseAddress = "127.0.0.1:7001";
  e.epoch = 2;
  e.clientCallSeq = 1_700_000_000_000_042;
  const { sent, sender } = recordingSender(100, 100);
  sender.tick([old]);
  const backup = sent[0][1];

  heard.length = 0;
  const cell = makeCell(scripts);
  assert.equal(restoreFromBackup(cell, backup, "127.0.0.1:7001", true), true);
  assert.equal(restoreFromBackup(cell, backup, "127.0.0.1:7001", true), false, "asked again: already here");
  const r = cell.entities.get(e.id)!;
  assert.deepEqual([r.x, r.y, r.z], [3, 0, 4]);
  assert.equal(r.baseAddress, "127.0.0.1:7001");
  assert.equal(r.hasClient, true);
  assert.equal(r.epoch, 3, "past the backup's epoch, as after a move");
  assert.equal(r.clientCallSeq, 1_700_000_000_000_042, "the number of the last client call it ran, for its base");
  assert.deepEqual(heard, ["onRestore steps=9"]);
  cell.tick(200);
  assert.deepEqual(heard, ["onRestore steps=9"]);
  cell.tick(100);
  assert.deepEqual(heard, ["onRestore steps=9", "onTimer 5"], "its timer fires when the backup had it due");
});

Deno.test("a backup with a malformed controller is refused, naming the entity and the controller", () => {
  const cell = makeCell();
  const e = cell.createEntity("Walker", { x: 0, y: 0, z: 0 });
  cell.startMovement(e, {
    kind: "moveToPoint",
    id: 1,
    dest: { x: 5, y: 0, z: 0 },
    speed: 2,
    faceMovement: true,
    userArg: 0,
  });
  e.baseAddress = "127.0.0.1:7001";
  const { sent, sender } = recordingSender(100, 100);
  sender.tick([cell]);
  const good = sent[0][1];
  const forged: CellBackup = {
    ...good,
    entity: { ...good.entity, controllers: [{ ...(good.entity.controllers[0] as object), dest: null }] },
  };
  const target = makeCell();
  assert.throws(
    () => restoreFromBackup(target, forged, "127.0.0.1:7001", true),
    /Walker 1 not restored: controller 0 of its backup: dest must be a point/,
  );
  assert.equal(target.entities.size, 0);
  assert.equal(restoreFromBackup(target, good, "127.0.0.1:7001", true), true, "the real one restores, moving on");
  target.tick(1000);
  assert.deepEqual([target.entities.get(e.id)!.x], [2]);
});

Deno.test("only the dead cellapp's buddy restores its NPCs; a former buddy drops its stale backups", async () => {
  const cell = makeCell();
  cell.createEntity("Walker", { x: 1, y: 0, z: 1 });
  cell.createEntity("Walker", { x: 2, y: 0, z: 2 });
  const { sent, sender } = recordingSender(100, 100);
  sender.buddy = { id: 2, address: "127.0.0.1:7002" };
  sender.tick([cell]);
  const log = memoryLogger();
  const current = new BuddyStore();
  const former = new BuddyStore();
  for (const [, b] of sent) {
    current.put("127.0.0.1:7001", b);
    former.put("127.0.0.1:7001", b);
  }
  const asked: number[] = [];
  const restore = (b: CellBackup) => (asked.push(b.entity.id), Promise.resolve());
  restoreNpcsOf(former, 1, "127.0.0.1:7001", false, log, restore);
  assert.deepEqual(asked, []);
  assert.deepEqual(former.senders(), [], "the stale backups are dropped");
  restoreNpcsOf(current, 1, "127.0.0.1:7001", true, log, restore);
  assert.deepEqual(asked.sort(), [1, 2]);
  assert.deepEqual(current.senders(), []);
  // A restore the cellappmgr refuses is logged, naming the entity.
  restoreNpcsOf(former, 1, "127.0.0.1:7001", true, log, restore); // nothing left: no-op
  const again = new BuddyStore();
  again.put("127.0.0.1:7001", sent[0][1]);
  restoreNpcsOf(again, 1, "127.0.0.1:7001", true, log, () => Promise.reject(new Error("space 5 is gone")));
  await log.waitFor(/Walker 1 of dead cellapp 1 not restored in space 5: space 5 is gone/, 1000);
});
