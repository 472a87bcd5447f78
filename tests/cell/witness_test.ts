import assert from "node:assert/strict";
import { createRegistry, defineEntity, T } from "../../core/def/mod.ts";
import { CellScript } from "../../core/script.ts";
import { Cell } from "../../cell/cell.ts";
import type { Entity } from "../../cell/entity.ts";
import { configureSpaceAoI, Witness, type WitnessOptions } from "../../cell/witness/witness.ts";
import { ClientWorld } from "../../client/world.ts";
import { loneCell } from "../../testing/lone_cell.ts";

/** The LoD table of BigWorld's documentation: levels at 20, 100 and 500 m. */
const Seer = defineEntity({
  name: "Seer",
  hasCell: true,
  hasClient: true,
  volatile: { position: true, yaw: true },
  lodLevels: [
    { label: "NEAR", distance: 20, hysteresis: 2 },
    { label: "MEDIUM", distance: 100, hysteresis: 5 },
    { label: "FAR", distance: 500, hysteresis: 10 },
  ],
  properties: {
    badge: { type: T.UINT8, flags: "OTHER_CLIENTS", detailLevel: "NEAR" },
    outfit: { type: T.UINT8, flags: "OTHER_CLIENTS", detailLevel: "MEDIUM" },
    banner: { type: T.UINT8, flags: "OTHER_CLIENTS", detailLevel: "FAR" },
    name: { type: T.string(16), flags: "ALL_CLIENTS" },
  },
});
const registry = createRegistry({ entities: [Seer] });
const log: string[] = [];

class Watcher extends CellScript {
  override onGetWitness() {
    log.push(`get ${this.self.id}`);
  }
  override onLoseWitness() {
    log.push(`lose ${this.self.id}`);
  }
  override onEnteredAoI(other: Entity) {
    log.push(`entered ${this.self.id} ${other.id}`);
  }
  override onLeftAoI(other: Entity) {
    log.push(`left ${this.self.id} ${other.id}`);
  }
}

function makeCell(scripts: Record<string, unknown> = {}): Cell {
  return loneCell({ registry, scripts }).cell;
}

function attach(e: Entity, opts: WitnessOptions = {}) {
  const ref: { witness?: Witness } = {};
  const frames: number[] = [];
  const world = new ClientWorld(registry, { send: (b) => ref.witness!.receive(b) });
  world.setPlayer(e.id, e.type);
  const witness = ref.witness = new Witness(e, opts, (f) => {
    frames.push(f.length);
    world.receive(f);
  });
  return { witness, world, frames };
}

function step(cell: Cell, n = 1): void {
  for (let i = 0; i < n; i++) {
    cell.tick(100); // the cell updates its witnesses at the end of each tick
  }
}

const at = (x: number, z = 0) => ({ x, y: 0, z });

Deno.test("two clients see each other enter and leave at the AoI radius, with hysteresis", () => {
  log.length = 0;
  const cell = makeCell({ Seer: Watcher });
  const a = cell.createEntity("Seer", at(0), { name: "a" });
  const b = cell.createEntity("Seer", at(200), { name: "b" });
  const ca = attach(a, { aoiRadius: 100, hysteresis: 10 });
  const cb = attach(b, { aoiRadius: 100, hysteresis: 10 });
  const sees = () => [ca.world.entities.has(b.id), cb.world.entities.has(a.id)];
  step(cell, 3);
  assert.deepEqual(sees(), [false, false]);
  for (
    const [x, expect] of [[101, false], [99.5, true], [105, true], [109.9, true], [110.5, false], [105, false]] as const
  ) {
    b.position = at(x);
    step(cell, 3);
    assert.deepEqual(sees(), [expect, expect], `at ${x} m`);
  }
  b.position = at(99);
  step(cell, 3);
  assert.deepEqual(sees(), [true, true]);
  assert.equal(ca.world.entities.get(b.id)!.props.name, "b");
  assert.ok(Math.abs(ca.world.entities.get(b.id)!.position.x - 99) < 0.05);
  assert.deepEqual(log.filter((l) => l.startsWith("get")), [`get ${a.id}`, `get ${b.id}`]);
  assert.deepEqual(log.filter((l) => l.startsWith(`entered ${a.id}`)).length, 2);
  assert.deepEqual(log.filter((l) => l.startsWith(`left ${a.id}`)), [`left ${a.id} ${b.id}`]);
  ca.witness.destroy();
  assert.ok(log.includes(`lose ${a.id}`));
});

Deno.test("BigWorld's example LoD table: observers at 15, 90, 400 and 1000 m see the levels they are within", () => {
  const cell = makeCell();
  configureSpaceAoI(cell, { aoiRadius: 1200, hysteresis: 10 });
  const subject = cell.createEntity("Seer", at(0), { name: "s", badge: 1, outfit: 1, banner: 1 });
  const dists = [15, 90, 400, 1000];
  const obs = dists.map((d) => attach(cell.createEntity("Seer", at(0, d))));
  const seen = obs.map(() => new Map<string, number>());
  obs.forEach((o, i) =>
    o.world.on("property", (ev) => ev.entity.id === subject.id && seen[i].set(ev.name, ev.value as number))
  );
  step(cell, 40);
  const props = (i: number) => obs[i].world.entities.get(subject.id)!.props;
  // At creation and as the detail level settled, each got the levels it is within.
  assert.deepEqual(dists.map((_, i) => [props(i).badge, props(i).outfit, props(i).banner, props(i).name]), [
    [1, 1, 1, "s"],
    [0, 1, 1, "s"],
    [0, 0, 1, "s"],
    [0, 0, 0, "s"],
  ]);
  assert.deepEqual(dists.map((_, i) => obs[i].world.entities.get(subject.id)!.detailLevel), [0, 1, 2, 3]);
  subject.props.badge = 2;
  subject.props.outfit = 2;
  subject.props.banner = 2;
  step(cell, 40);
  const table = seen.map((m) => ["badge", "outfit", "banner"].map((n) => m.get(n) === 2 ? "yes" : "no"));
  assert.deepEqual(table, [
    ["yes", "yes", "yes"],
    ["no", "yes", "yes"],
    ["no", "no", "yes"],
    ["no", "no", "no"],
  ]);
});

Deno.test("crossing a LoD boundary both ways shows its hysteresis and sends what changed while away", () => {
  const cell = makeCell();
  const subject = cell.createEntity("Seer", at(0), { outfit: 1 });
  const o = cell.createEntity("Seer", at(0, 90));
  const c = attach(o, { aoiRadius: 1200 });
  const got: number[] = [];
  c.world.on("property", (ev) => ev.name === "outfit" && got.push(ev.value as number));
  const levels: number[] = [];
  c.world.on("detailLevel", (ev) => levels.push(ev.level));
  const go = (z: number, outfit: number) => {
    o.position = at(0, z);
    step(cell, 2);
    subject.props.outfit = outfit;
    step(cell, 10);
  };
  step(cell, 5);
  go(104, 2); // beyond 100 but within its hysteresis (5): still MEDIUM
  go(106, 3); // beyond 105: FAR, outfit no longer sent
  go(101, 4); // back inside 105 but not within 100: still FAR
  assert.deepEqual(got, [2]);
  assert.equal(c.world.entities.get(subject.id)!.props.outfit, 2);
  go(99, 5); // within 100: MEDIUM again; the value changed while away came with the level, then the new one
  assert.equal(c.world.entities.get(subject.id)!.props.outfit, 5);
  assert.deepEqual(levels, [1, 2, 1]);
});

Deno.test("a LoD level is entered within its distance and left only beyond distance + hysteresis", () => {
  const Lod = defineEntity({
    name: "Lod",
    hasCell: true,
    hasClient: true,
    volatile: { position: true },
    lodLevels: [{ label: "NEAR", distance: 20, hysteresis: 10 }],
    properties: { badge: { type: T.UINT8, flags: "OTHER_CLIENTS", detailLevel: "NEAR" } },
  });
  const reg = createRegistry({ entities: [Lod] });
  const { cell } = loneCell({ registry: reg, bounds: [-500, -500, 500, 500] });
  const subject = cell.createEntity("Lod", at(0), { badge: 7 });
  // The observer arrives from afar and stays at 15 m: between 10 and 20 m, where the old rule never gave the level.
  const o = cell.createEntity("Lod", at(0, 40));
  const ref: { w?: Witness } = {};
  const world = new ClientWorld(reg, { send: (b) => ref.w!.receive(b) });
  world.setPlayer(o.id, o.type);
  ref.w = new Witness(o, { aoiRadius: 100 }, (f) => world.receive(f));
  const level = () => world.entities.get(subject.id)?.detailLevel;
  step(cell, 5);
  assert.equal(level(), 1, "outer level at 40 m");
  for (const [z, expect] of [[15, 0], [29, 0], [30, 0], [25, 0], [31, 1], [21, 1], [20, 0]] as const) {
    o.position = at(0, z);
    step(cell, 3);
    assert.equal(level(), expect, `at ${z} m`);
  }
  assert.equal(world.entities.get(subject.id)!.props.badge, 7, "the level's properties came with it");
});

function spinners(dists: number[], opts: WitnessOptions, ticks: number) {
  const cell = makeCell();
  const me = cell.createEntity("Seer", at(0));
  const others = dists.map((d) => cell.createEntity("Seer", at(d)));
  const c = attach(me, { aoiRadius: 200, ...opts });
  const sends = new Map<number, number>();
  c.world.on("move", (ev) => sends.set(ev.entity.id, (sends.get(ev.entity.id) ?? 0) + 1));
  step(cell, 100);
  assert.equal(c.world.entities.size, dists.length);
  sends.clear();
  c.frames.length = 0;
  for (let t = 0; t < ticks; t++) {
    for (const e of others) e.yaw += 0.1;
    step(cell);
  }
  return { rate: others.map((e) => sends.get(e.id) ?? 0), frames: c.frames };
}

Deno.test("under a tight byte budget nearer entities are sent more often, as the priority formula says", () => {
  // Ten entities at each distance; a yaw-only update is 3 bytes, so the budget holds 8 a tick out of 30.
  const dists = [10, 40, 90].flatMap((d) => Array.from({ length: 10 }, (_, i) => d + i * 0.1));
  const budget = 25, ticks = 600;
  const { rate, frames } = spinners(dists, { bytesPerTick: budget, maxPriorityDelta: 1e9 }, ticks);
  assert.ok(frames.every((n) => n <= budget), `frames over budget: ${frames.filter((n) => n > budget)}`);
  assert.equal(rate.reduce((a, b) => a + b), 8 * ticks);
  const group = (g: number) => rate.slice(g * 10, g * 10 + 10).reduce((a, b) => a + b);
  // Send rate is inversely proportional to delta = distance * 0.2 + 1 (the nearest still below once a tick).
  const delta = [10, 40, 90].map((d) => d * 0.2 + 1);
  assert.ok(group(0) < 10 * ticks);
  for (let g = 1; g < 3; g++) {
    const expected = delta[g] / delta[0], got = group(0) / group(g);
    assert.ok(Math.abs(got - expected) / expected < 0.1, `near/far ${got.toFixed(2)} vs ${expected.toFixed(2)}`);
  }
});

Deno.test("MAX_PRIORITY_DELTA holds far entities back when the budget is the limit; a drained queue restarts", () => {
  const dists = [10, 95, 150];
  const free = spinners(dists, { bytesPerTick: 7, maxPriorityDelta: 1e9 }, 300);
  const capped = spinners(dists, { bytesPerTick: 7, maxPriorityDelta: 2 }, 300);
  assert.ok(capped.rate[2] < free.rate[2] * 0.8, `far: capped ${capped.rate} vs free ${free.rate}`);
  assert.ok(capped.frames.some((n) => n <= 4), "some ticks stop short of the budget");
  // Room for everything: the whole queue goes each tick, priorities restart, so everything is sent every tick.
  const roomy = spinners(dists, { bytesPerTick: 1000, maxPriorityDelta: 10 }, 100);
  assert.deepEqual(roomy.rate, [100, 100, 100]);
});

Deno.test("volatile: PackedXZ on the ground, PackedXYZ off it, full positions when it does not fit", () => {
  const cell = makeCell();
  const me = cell.createEntity("Seer", at(0));
  const walker = cell.createEntity("Seer", at(30));
  const flyer = cell.createEntity("Seer", at(-40));
  const far = cell.createEntity("Seer", at(3000));
  flyer.isOnGround = false;
  const c = attach(me, { aoiRadius: 100, hysteresis: 0 });
  c.witness.addToAoI(far);
  step(cell, 4);
  for (let t = 0; t < 30; t++) {
    me.position = at(t * 2, t);
    walker.position = at(30 + t * 1.3, -t * 0.7);
    flyer.position = { x: -40 + t, y: 5 + t * 0.5, z: 3 };
    far.position = at(3000 + t, 7);
    walker.yaw = flyer.yaw = t * 0.2 - 3;
    step(cell);
    for (const e of [walker, flyer, far]) {
      const seen = c.world.entities.get(e.id)!;
      const err = Math.hypot(seen.position.x - e.x, seen.position.z - e.z);
      // Half a packed step at ~50 m with this AoI's scale (about 0.2) is 0.1 m.
      assert.ok(err < 0.15, `entity ${e.id} off by ${err} at tick ${t}`);
      assert.ok(Math.abs(seen.yaw - e.yaw) < 0.013 || e === far);
    }
    assert.ok(Math.abs(c.world.entities.get(flyer.id)!.position.y - flyer.y) < 0.01);
  }
  assert.ok(c.witness.stats.fullPositions >= 29, `full positions ${c.witness.stats.fullPositions}`);
  assert.ok(Math.abs(c.world.reference.x - me.x) <= 1 && Math.abs(c.world.reference.z - me.z) <= 1);
});

Deno.test("an alias given to another entity after a leave: updates by alias move the new one", () => {
  const cell = makeCell();
  const a = cell.createEntity("Seer", at(0), { name: "a" });
  const b = cell.createEntity("Seer", at(50), { name: "b" });
  const ca = attach(a, { aoiRadius: 100, hysteresis: 10 });
  step(cell, 3);
  const alias = ca.world.entities.get(b.id)!.alias;
  b.position = at(300);
  step(cell, 3);
  assert.equal(ca.world.entities.has(b.id), false);
  const c = cell.createEntity("Seer", at(-50), { name: "c" });
  step(cell, 3);
  const seen = ca.world.entities.get(c.id)!;
  assert.equal(seen.alias, alias, "the freed alias is handed out again");
  const moves: number[] = [];
  ca.world.on("move", (ev) => void moves.push(ev.entity.id));
  for (const x of [-40, -30, -20]) {
    c.position = at(x);
    step(cell, 2);
    assert.ok(Math.abs(seen.position.x - x) < 0.05, `c at ${x} m, seen at ${seen.position.x}`);
  }
  assert.ok(moves.length > 0 && moves.every((id) => id === c.id));
});
