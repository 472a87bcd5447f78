import assert from "node:assert/strict";
import { createRegistry, defineEntity, T } from "../../core/def/mod.ts";
import { CellScript } from "../../core/script.ts";
import type { Cell } from "../../cell/cell.ts";
import type { GhostConfig } from "../../cell/borders/ghosts.ts";
import { ghostStateOf } from "../../cell/borders/ghosts.ts";
import { offloadStateOf } from "../../cell/borders/offload.ts";
import { twoCellsOf } from "../../testing/two_cells.ts";
import type { ChaosOptions } from "../../testing/route.ts";

const Walker = defineEntity({
  name: "Walker",
  hasCell: true,
  volatile: { position: true, yaw: true },
  properties: {
    hp: { type: T.INT32, flags: "OTHER_CLIENTS", default: 100 },
    secret: { type: T.INT32, flags: "CELL_PRIVATE" },
    shared: { type: T.INT32, flags: "CELL_PUBLIC" },
    ticks: { type: T.INT32, flags: "CELL_PUBLIC" },
    bag: { type: T.array(T.UINT16), flags: "ALL_CLIENTS" },
  },
  cellMethods: {
    hit: { args: [{ name: "amount", type: T.INT32 }] },
    slowHit: { args: [{ name: "amount", type: T.INT32 }] },
  },
});

/** Lets a test decide when a slow hit answers. */
const gates: (() => void)[] = [];
const registry = createRegistry({ entities: [Walker] });

/** Counts its timer's firings in a property, so a copy that skips or repeats a firing shows. */
class Counting extends CellScript {
  override onCreated() {
    this.self.addTimer(0.1, 0.1);
  }
  override onTimer() {
    (this.self.props as { ticks: number }).ticks++;
  }
  hit(_caller: number, amount: number): number {
    const p = this.self.props as { hp: number };
    p.hp -= amount;
    return p.hp;
  }
  async slowHit(caller: number, amount: number): Promise<number> {
    await new Promise<void>((r) => gates.push(r));
    return this.hit(caller, amount);
  }
}

/** The two-cell harness with Walkers, its messages in order or through chaos (testing/route.ts). */
function twoCells(
  cfg: Partial<GhostConfig> = {},
  drop: (def: string, args: unknown[]) => boolean = () => false,
  chaos?: ChaosOptions,
) {
  return twoCellsOf({ registry, scripts: { Walker: Counting }, cfg, drop, chaos });
}

/** Each scenario below runs with messages in order, then through chaos with these seeds. */
const ROUTES: (ChaosOptions | undefined)[] = [undefined, { seed: 1 }, { seed: 2 }, { seed: 3 }];
const through = (chaos?: ChaosOptions) => chaos ? ` (messages delayed, reordered, duplicated: seed ${chaos.seed})` : "";

Deno.test("ghosts exist exactly where the grown neighbour rect contains the real, after the minimum lifetime", async () => {
  const { a, b, tick } = twoCells();
  const near = a.createEntity("Walker", { x: 90, y: 0, z: 50 });
  const far = a.createEntity("Walker", { x: 50, y: 0, z: 50 });
  await tick(2);
  assert.deepEqual([...b.ghosts.keys()], [near.id], "only the real within 20 m of the border is ghosted");
  assert.equal(b.ghosts.get(near.id)!.isReal, false);
  assert.deepEqual(b.report().ghosts, 1);
  assert.deepEqual(b.describe().map((e) => [e.id, e.real]), [[near.id, false]]);
  assert.equal(far.ghosting, null);
  // Leaving the area: the ghost goes, but not before it lived its minimum time.
  a.moveEntity(near, 60, 0, 50);
  await tick(1);
  const createdAt = b.time;
  assert.ok(b.ghosts.has(near.id), "a young ghost is kept");
  await tick(5);
  assert.ok(!b.ghosts.has(near.id), `gone ${b.time - createdAt} ms later`);
});

Deno.test("a ghost follows its real: position, ghosted properties, history; private ones stay home", async () => {
  const { a, b, tick } = twoCells();
  const e = a.createEntity("Walker", { x: 95, y: 0, z: 10 });
  e.props.secret = 7;
  e.props.shared = 3;
  await tick(2);
  const g = b.ghosts.get(e.id)!;
  assert.equal(g.props.shared, 3);
  assert.throws(() => g.props.secret, /not held by the ghost part/, "CELL_PRIVATE never leaves the real");
  a.moveEntity(e, 97, 1, 12);
  e.yaw = 1.25;
  e.props.hp = 42;
  e.props.shared = 4;
  (e.props.bag as number[]).push(5, 6);
  (e.props.bag as number[])[0] = 9;
  await tick(1);
  assert.deepEqual([g.x, g.y, g.z, g.yaw], [97, 1, 12, 1.25]);
  assert.deepEqual([g.props.hp, g.props.shared, [...(g.props.bag as number[])]], [42, 4, [9, 6]]);
  assert.throws(() => (g.props.hp = 1), /hp/, "a ghost's properties cannot be set");
  assert.deepEqual(b.rangeList.entitiesInRange(97, 12, 1).map((x) => x.id), [e.id], "the ghost is on the range list");
});

Deno.test("batches that arrive early are held until the gap fills; a gap that never fills asks for a resync", async () => {
  let dropNext = false;
  const { a, b, tick, log } = twoCells({ resyncAfterBatches: 3 }, (def) => {
    if (def !== "ghostSync" || !dropNext) return false;
    dropNext = false;
    return true;
  });
  const e = a.createEntity("Walker", { x: 95, y: 0, z: 10 });
  await tick(2);
  const g = b.ghosts.get(e.id)!;
  const seq0 = g.ghostInfo!.seq;
  // Deliver two batches out of order by hand.
  e.props.hp = 1;
  a.tick(100);
  e.props.hp = 2;
  // Simulate reordering: the ghost sees batch seq0+2 before seq0+1.
  b.borders.receiveGhostSync(e.id, seq0 + 2, [[1, new Uint8Array()]].slice(0, 0));
  assert.equal(g.ghostInfo!.seq, seq0, "held back");
  b.borders.receiveGhostSync(e.id, seq0 + 1, []);
  assert.equal(g.ghostInfo!.seq, seq0 + 2, "the gap filled: both applied in order");
  // A batch lost for good: later ones pile up until the ghost asks for a resync, which brings it up to date.
  await tick(1);
  dropNext = true;
  e.props.hp = 50;
  await tick(1);
  for (let i = 0; i < 4; i++) {
    e.props.hp = 60 + i;
    await tick(1);
  }
  assert.ok(log.lines.some((l) => l.includes(`ghost Walker ${e.id} is missing updates`)));
  assert.equal(g.props.hp, 63, "after the resync the ghost has the real's value");
  e.props.hp = 70;
  await tick(1);
  assert.equal(g.props.hp, 70);
});

Deno.test("destroying a real destroys its ghosts", async () => {
  const { a, b, tick } = twoCells();
  const e = a.createEntity("Walker", { x: 99, y: 0, z: 10 });
  await tick(2);
  assert.ok(b.ghosts.has(e.id));
  a.destroyEntity(e);
  await tick(1);
  assert.ok(!b.ghosts.has(e.id));
  assert.equal(b.rangeList.entitiesInRange(99, 10, 5).length, 0);
});

const CROSSING =
  "a real that crosses the border moves to the next cell, keeps its timers and movement, and leaves a ghost";
async function crossing(chaos?: ChaosOptions): Promise<void> {
  // Ghosts 30 m deep: the old cell keeps its ghost while the hand-over's answer may take a few ticks.
  const { a, b, tick, flush } = twoCells({ ghostRadius: 30 }, undefined, chaos);
  const e = a.createEntity("Walker", { x: 80, y: 0, z: 50 });
  e.moveToPoint({ x: 140, y: 0, z: 50 }, 10);
  for (let i = 0; i < 10 && !b.ghosts.has(e.id); i++) await tick(1);
  assert.ok(b.ghosts.has(e.id) && e.x < 100, "its ghost is there before it crosses");
  const ticksAt = (c: Cell) => (c.entities.get(e.id) ?? c.ghosts.get(e.id))!.props.ticks as number;
  let moved = false;
  for (let i = 0; i < 60 && !moved; i++) {
    await tick(1);
    moved = b.entities.has(e.id) && !a.entities.has(e.id); // the old cell has its answer too
  }
  assert.ok(moved, "it became real in the cell that contains it");
  const real = b.entities.get(e.id)!;
  assert.ok(real.x > 110 - 1, `it moved once past the hysteresis (x = ${real.x})`);
  assert.ok(!a.entities.has(e.id) && a.ghosts.get(e.id)!.isReal === false, "the old real is a ghost now");
  assert.ok(real.script !== null, "its script came along");
  const before = ticksAt(b);
  await tick(5);
  assert.equal(ticksAt(b), before + 5, "its repeating timer kept firing once per tick, on the new real only");
  await flush();
  assert.equal(ticksAt(a), ticksAt(b), "the ghost left behind follows the new real");
  await tick(40);
  assert.deepEqual([real.x, real.z], [140, 50], "its movement carried on to the end");
  assert.equal(a.entities.size + b.entities.size, 1, "none lost, none doubled");
}
for (const chaos of ROUTES) Deno.test(CROSSING + through(chaos), () => crossing(chaos));

Deno.test("an offload whose target fails leaves the entity real where it was; it tries again later", async () => {
  const { a, b, tick, failOffloads, log } = twoCells();
  failOffloads(true);
  const e = a.createEntity("Walker", { x: 80, y: 0, z: 50 });
  e.moveToPoint({ x: 130, y: 0, z: 50 }, 20);
  await tick(30);
  assert.ok(a.entities.has(e.id) && !b.entities.has(e.id), "still real on the old side");
  assert.ok(log.lines.some((l) => l.includes("stays real") && l.includes("offload to cellapp 2 failed")));
  assert.deepEqual(e.position, { x: 130, y: 0, z: 50 }, "and it kept moving");
  failOffloads(false);
  for (let i = 0; i < 40 && !b.entities.has(e.id); i++) await tick(1);
  assert.ok(b.entities.has(e.id) && !a.entities.has(e.id), "a later attempt moved it");
  assert.equal(a.entities.size + b.entities.size, 1);
});

const BURST = "a migration in the middle of a burst of property changes loses and reorders nothing";
async function burst(chaos?: ChaosOptions): Promise<void> {
  const { a, b, tick, flush } = twoCells({}, undefined, chaos);
  const e = a.createEntity("Walker", { x: 105, y: 0, z: 50 });
  for (let i = 0; i < 10 && !b.ghosts.has(e.id); i++) await tick(1);
  const seen: number[] = [];
  let n = 100; // up from its initial hp, so that a ghost showing an older value shows a smaller one
  for (let i = 0; i < 30; i++) {
    const real = a.entities.get(e.id) ?? b.entities.get(e.id)!;
    // Several changes every tick, the tick of the hand-over included; the entity crosses at tick 5.
    for (let k = 0; k < 3; k++) real.props.hp = ++n;
    if (i === 5) a.moveEntity(real, 115, 0, 50); // past the hysteresis, still in the old cell's ghost area
    await tick(1);
    const ghost = a.ghosts.get(e.id) ?? b.ghosts.get(e.id);
    if (ghost) seen.push(ghost.props.hp as number);
  }
  // Through chaos the hand-over's answer and the last batches may still be on their way.
  const settled = () => b.entities.has(e.id) && !a.entities.has(e.id) && a.ghosts.get(e.id)?.props.hp === n;
  for (let i = 0; i < 60 && !settled(); i++) await tick(1);
  await flush();
  assert.ok(b.entities.has(e.id), "it moved");
  const real = b.entities.get(e.id)!;
  assert.equal(real.props.hp, n, "no change was lost on the real");
  assert.equal(a.ghosts.get(e.id)!.props.hp, n, "the ghost ends where the real is");
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i] >= seen[i - 1], `never backwards: ${seen}`);
}
for (const chaos of ROUTES) Deno.test(BURST + through(chaos), () => burst(chaos));

Deno.test("a call on a ghost runs on its real across the border and resolves with its answer", async () => {
  const { a, b, tick } = twoCells();
  const attacker = a.createEntity("Walker", { x: 95, y: 0, z: 50 });
  const target = b.createEntity("Walker", { x: 105, y: 0, z: 50 });
  await tick(2);
  assert.ok(a.ghosts.has(target.id), "the attacker's cell sees the target through its ghost");
  const answer = attacker.call(target.id, "hit", 10);
  await tick(1);
  assert.equal(await answer, 90, "the real's answer came back");
  assert.equal(target.props.hp, 90);
  await tick(1);
  assert.equal(a.ghosts.get(target.id)!.props.hp, 90, "and the ghost followed");
  // Wrong calls reject with a reason; so does a call on an entity that is gone.
  const nope = attacker.call(target.id, "nope");
  const badArg = attacker.call(target.id, "hit", "ten");
  // Handled later, after the tick that carries them; mark them as expected to reject.
  nope.catch(() => {});
  badArg.catch(() => {});
  await tick(1);
  await assert.rejects(nope, /has no cell method 'nope'/);
  await assert.rejects(badArg, /hit argument 0/);
  b.destroyEntity(target);
  await tick(1);
  // Its ghost went; the call goes to the cell the real was last in, which says it is gone.
  const late = attacker.call(target.id, "hit", 1);
  late.catch(() => {});
  await tick(1);
  await assert.rejects(late, /no such entity/);
});

Deno.test("an entity awaiting a call does not move cell until the answer comes", async () => {
  const { a, b, tick } = twoCells();
  const caller = a.createEntity("Walker", { x: 95, y: 0, z: 50 });
  const target = a.createEntity("Walker", { x: 90, y: 0, z: 50 });
  await tick(2);
  const answer = caller.call(target.id, "slowHit", 5);
  a.moveEntity(caller, 130, 0, 50);
  await tick(10);
  assert.ok(a.entities.has(caller.id) && caller.pendingCalls === 1, "stays while its call is pending");
  gates.shift()!();
  assert.equal(await answer, 95);
  for (let i = 0; i < 20 && !b.entities.has(caller.id); i++) await tick(1);
  assert.ok(b.entities.has(caller.id), "moves once it settled");
});

Deno.test("a ghost state or an offload that does not decode leaves the cell as it was", async () => {
  const { a, b, tick } = twoCells();
  const e = a.createEntity("Walker", { x: 95, y: 0, z: 10 });
  await tick(2);
  const ghost = b.ghosts.get(e.id)!;
  const state = ghostStateOf(e, b.cellId, 1, "127.0.0.1:1");
  const broken = { ...state, id: e.id + 1000, props: new Uint8Array([0xff, 0xff, 0xff]) };
  assert.throws(() => b.borders.createGhost(broken));
  assert.ok(!b.ghosts.has(e.id + 1000), "no half-made ghost is kept");
  // The ghost it has is left whole: an undecodable offload does not make it real, nor forget it.
  const offload = offloadStateOf(e, b.cellId, 1, "127.0.0.1:1", a.time);
  assert.throws(() =>
    b.borders.receiveOffload({ ...offload, entity: { ...offload.entity, props: new Uint8Array([0xff]) } })
  );
  assert.equal(b.ghosts.get(e.id), ghost);
  assert.equal(ghost.isReal, false);
  b.borders.deleteGhost(e.id);
  assert.ok(!b.ghosts.has(e.id), "and it can still be deleted: it is on the range list");
});

Deno.test("a ghost sync with a pose out of the world is dropped whole, and the ghost catches up by a resync", async () => {
  const { a, b, tick, log } = twoCells({ resyncAfterBatches: 2 });
  const e = a.createEntity("Walker", { x: 95, y: 0, z: 10 });
  await tick(2);
  const g = b.ghosts.get(e.id)!;
  const seq = g.ghostInfo!.seq;
  const bad = [
    [0, 95, 1e308, 10, 0, 0, 0, true],
    [0, 95, NaN, 10, 0, 0, 0, true],
    [0, Infinity, 0, 10, 0, 0, 0, true],
    [0, 95, 0, 10, NaN, 0, 0, true],
    [0, 95, "1", 10, 0, 0, 0, true],
    [0, 95, 0, 10, 0, 0, 0, 1],
  ];
  for (const op of bad) b.borders.receiveGhostSync(e.id, seq + 1, [op]);
  assert.deepEqual([g.x, g.y, g.z, g.yaw, g.ghostInfo!.seq], [95, 0, 10, 0, seq], "nothing of them applied");
  assert.ok(log.lines.some((l) => /ghost sync .* dropped: op 0: pose 95, 1e\+308/.test(l)), log.lines.join("\n"));
  // The real's own batches go on; the ghost knows it missed one, asks for a resync, and is right again.
  a.moveEntity(e, 96, 2, 11);
  await tick(20);
  assert.deepEqual([g.x, g.y, g.z], [96, 2, 11]);
});
