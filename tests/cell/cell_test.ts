import assert from "node:assert/strict";
import { createRegistry, defineEntity, T } from "../../core/def/mod.ts";
import { CellScript, type EntityRef } from "../../core/script.ts";
import { Cell } from "../../cell/cell.ts";
import type { Entity } from "../../cell/entity.ts";
import { memoryLogger } from "../../testing/log.ts";
import { loneCell } from "../../testing/lone_cell.ts";
import { waitFor } from "../../testing/wait.ts";

const Walker = defineEntity({
  name: "Walker",
  hasCell: true,
  properties: {
    steps: { type: T.UINT32, flags: "CELL_PUBLIC" },
    leg: { type: T.UINT8, flags: "CELL_PRIVATE" },
    label: { type: T.string(8), flags: "ALL_CLIENTS" },
  },
});
const Rock = defineEntity({ name: "Rock", hasCell: true, properties: {} });
const registry = createRegistry({ entities: [Walker, Rock] });

type WalkerProps = { steps: number; leg: number; label: string };
const events: string[] = [];

/** Patrols between two points: deterministic, so a restored copy must behave the same. */
class Patrol extends CellScript<WalkerProps> {
  override onCreated() {
    this.self.moveToPoint({ x: 10, y: 0, z: 0 }, 4, { userArg: 1 });
    this.self.addTimer(0.3, 0.3, 7);
  }
  override onMove(_id: number, userArg: number) {
    this.self.props.leg++;
    const x = this.self.props.leg % 2 === 0 ? 10 : 0;
    this.self.moveToPoint({ x, y: 0, z: 0 }, 4, { userArg: userArg + 1 });
  }
  override onTimer() {
    this.self.props.steps++;
  }
}

class Thrower extends CellScript {
  override onCreated() {
    this.self.addTimer(0.1, 0.1);
  }
  override onTimer() {
    throw new Error("boom");
  }
}

class Recorder extends CellScript {
  override onTimer(id: number, userArg: number) {
    events.push(`timer ${this.self.id} ${id} ${userArg} @${this.self.time}`);
  }
  override onMove(id: number, userArg: number) {
    events.push(`move ${this.self.id} ${id} ${userArg} @${this.self.time}`);
  }
  override onEnteredRange(_id: number, other: EntityRef) {
    events.push(`enter ${this.self.id} ${other.id}`);
  }
  override onLeftRange(_id: number, other: EntityRef) {
    events.push(`leave ${this.self.id} ${other.id}`);
  }
  override onSpaceGone() {
    events.push(`gone ${this.self.id}`);
  }
  override onDestroy() {
    events.push(`destroy ${this.self.id}`);
  }
}

function makeCell(scripts: Record<string, unknown>, opts: { spaceId?: number; isDefault?: boolean } = {}) {
  const log = memoryLogger();
  const { cell, host } = loneCell({
    registry,
    scripts,
    log,
    spaceId: opts.spaceId ?? 5,
    bounds: [-100, -100, 100, 100],
    isDefault: opts.isDefault ?? false,
  });
  /** The cell's requests to shut its space down, as "space: why". */
  const shutdowns = () => host.callsOf("requestShutDown").map(([id, why]) => `${id}: ${why}`);
  /** The spaces whose cell said it is gone. */
  const gone = () => host.callsOf("cellGone").map(([spaceId]) => spaceId);
  return { cell, log, shutdowns, gone };
}

const run = (cell: Cell, ticks: number, dt = 100) => {
  for (let i = 0; i < ticks; i++) cell.tick(dt);
};

Deno.test("timers fire within one tick of when they are due, and repeat", () => {
  events.length = 0;
  const { cell } = makeCell({ Walker: Recorder });
  const e = cell.createEntity("Walker", { x: 0, y: 0, z: 0 });
  const once = e.addTimer(0.35, 0, 1);
  const every = e.addTimer(0.2, 0.25, 2);
  run(cell, 12);
  const fired = events.map((l) => l.split(" ")).map(([, , id, arg, at]) => ({
    id: Number(id),
    arg: Number(arg),
    at: Number(at.slice(1)),
  }));
  const first = fired.filter((f) => f.id === once);
  assert.equal(first.length, 1);
  assert.ok(first[0].at >= 350 && first[0].at < 350 + 100, `one-shot fired at ${first[0].at}`);
  const rep = fired.filter((f) => f.id === every).map((f) => f.at);
  const due = [200, 450, 700, 950, 1200];
  assert.equal(rep.length, due.length, `repeating fired at ${rep}`);
  rep.forEach((at, i) => assert.ok(at >= due[i] && at < due[i] + 100, `firing ${i} at ${at}, due ${due[i]}`));
  // Cancelled timers stay silent.
  e.cancel(every);
  events.length = 0;
  run(cell, 10);
  assert.deepEqual(events, []);
});

Deno.test("moveToPoint arrives on time and calls onMove; moveToEntity follows a moving target", () => {
  events.length = 0;
  const { cell } = makeCell({ Walker: Recorder });
  const e = cell.createEntity("Walker", { x: 0, y: 0, z: 0 });
  const id = e.moveToPoint({ x: 30, y: 0, z: 40 }, 10, { userArg: 9 });
  run(cell, 49);
  assert.deepEqual(events, [], "50 m at 10 m/s takes 5 s");
  run(cell, 1);
  assert.deepEqual(events, [`move ${e.id} ${id} 9 @5000`]);
  assert.deepEqual(e.position, { x: 30, y: 0, z: 40 });
  assert.ok(Math.abs(e.yaw - Math.atan2(30, 40)) < 1e-9, "faces the way it moved");

  events.length = 0;
  const target = cell.createEntity("Walker", { x: 100, y: 0, z: 40 });
  target.moveToPoint({ x: 100, y: 0, z: 90 }, 1);
  const follow = e.moveToEntity(target.id, 20, 2, { userArg: 3 });
  run(cell, 40);
  assert.equal(events.length, 1, events.join());
  assert.match(events[0], new RegExp(`^move ${e.id} ${follow} 3 @`));
  const d = Math.hypot(e.position.x - target.position.x, e.position.z - target.position.z);
  assert.ok(d <= 2 + 1e-6 + 1, `ended ${d} m from its target`);
  // A cancelled movement stops where it is.
  const stop = e.moveToPoint({ x: -100, y: 0, z: 0 }, 10);
  cell.tick(100);
  const at = e.position;
  e.cancel(stop);
  run(cell, 5);
  assert.deepEqual(e.position, at);
});

Deno.test("an exception in a script is logged with the entity and does not stop the tick", () => {
  const { cell, log } = makeCell({ Walker: Thrower });
  const bad = cell.createEntity("Walker", { x: 0, y: 0, z: 0 });
  const good = cell.createEntity("Rock", { x: 5, y: 0, z: 0 });
  good.moveToPoint({ x: 15, y: 0, z: 0 }, 10);
  run(cell, 10);
  assert.ok(cell.scriptErrors >= 4, `${cell.scriptErrors} errors caught`);
  assert.ok(log.lines.some((l) => l.includes(`script error in Walker ${bad.id} (space 5) onTimer: Error: boom`)));
  assert.deepEqual(good.position, { x: 15, y: 0, z: 0 }, "the other entity kept moving");
});

Deno.test("property values are checked when set, naming the type and property", () => {
  const { cell } = makeCell({});
  assert.throws(() => cell.createEntity("Walker", { x: 0, y: 0, z: 0 }, { steps: -1 }), /Walker.*steps/);
  assert.throws(() => cell.createEntity("Walker", { x: 0, y: 0, z: 0 }, { label: "far too long" }), /Walker.*label/);
  assert.throws(() => cell.createEntity("Nope", { x: 0, y: 0, z: 0 }), /unknown entity type "Nope"/);
  const e = cell.createEntity("Walker", { x: 0, y: 0, z: 0 }, { label: "ok" });
  assert.throws(() => (e.props.steps = 1.5), /steps/);
  assert.equal(e.props.label, "ok");
});

Deno.test("an entity created from another's serialised state carries on identically", () => {
  const a = makeCell({ Walker: Patrol }, { spaceId: 7 });
  const b = makeCell({ Walker: Patrol }, { spaceId: 8 });
  const original = a.cell.createEntity("Walker", { x: 0, y: 0, z: 0 }, { label: "p" });
  run(a.cell, 17); // mid-leg, mid-timer
  b.cell.time = a.cell.time;
  const state = original.serialise(a.cell.time);
  const copy = b.cell.restoreEntity(structuredClone(state));
  assert.equal(copy.id, original.id);
  const snapshot = (e: Entity) => ({
    pos: e.position,
    yaw: e.yaw,
    props: { ...e.props },
    steps: e.props.steps,
    leg: e.props.leg,
  });
  assert.deepEqual(snapshot(copy), snapshot(original));
  for (let i = 0; i < 60; i++) {
    a.cell.tick(100);
    b.cell.tick(100);
    assert.deepEqual(snapshot(copy), snapshot(original), `tick ${i}`);
  }
  assert.ok((original.props.steps as number) > 20 && (original.props.leg as number) >= 3, "it really did things");
});

Deno.test("script range triggers report entities crossing the circle", () => {
  events.length = 0;
  const { cell } = makeCell({ Walker: Recorder });
  const watcher = cell.createEntity("Walker", { x: 0, y: 0, z: 0 });
  const other = cell.createEntity("Walker", { x: 50, y: 0, z: 0 });
  watcher.addRangeTrigger(10);
  cell.moveEntity(other, 8, 0, 7); // inside the square, outside the circle (10.6 m)
  assert.deepEqual(events, []);
  cell.moveEntity(other, 6, 0, 6);
  assert.deepEqual(events, [`enter ${watcher.id} ${other.id}`]);
  assert.deepEqual(watcher.entitiesInRange(10).map((r) => r.id), [other.id]);
  cell.destroyEntity(other);
  assert.deepEqual(events, [
    `enter ${watcher.id} ${other.id}`,
    `destroy ${other.id}`,
    `leave ${watcher.id} ${other.id}`,
  ]);
});

Deno.test("space shutdown: delayed, repeated requests ignored, onSpaceGone then destroy; empty spaces ask to go", async () => {
  events.length = 0;
  const { cell, shutdowns, gone, log } = makeCell({ Walker: Recorder });
  const a = cell.createEntity("Walker", { x: 0, y: 0, z: 0 });
  const b = cell.createEntity("Walker", { x: 1, y: 0, z: 0 });
  cell.shutDown();
  cell.shutDown();
  assert.ok(log.lines.some((l) => l.includes("already shutting down")));
  assert.deepEqual(events, [], "nothing happens before the delay");
  const t0 = Date.now();
  await waitFor("the cell to be gone", () => gone().length > 0, 3000);
  assert.deepEqual(gone(), [5]);
  assert.ok(Date.now() - t0 >= 900);
  assert.deepEqual(
    (events as string[]).filter((e) => e.startsWith("gone")).sort(),
    [`gone ${a.id}`, `gone ${b.id}`].sort(),
  );
  assert.equal(cell.entities.size, 0);
  assert.deepEqual(shutdowns(), [], "a cell already shutting down does not ask again");

  const other = makeCell({});
  const e = other.cell.createEntity("Walker", { x: 0, y: 0, z: 0 });
  other.cell.destroyEntity(e);
  assert.deepEqual(other.shutdowns(), ["5: the space is empty"]);
  const def = makeCell({}, { spaceId: 1, isDefault: true });
  const d = def.cell.createEntity("Walker", { x: 0, y: 0, z: 0 });
  assert.throws(() => d.destroySpace(), /default space/);
  def.cell.destroyEntity(d);
  assert.deepEqual(def.shutdowns(), [], "the default space never asks to shut down");
});
