import assert from "node:assert/strict";
import { type BspNode, buildBsp, cellRects, removeCell, totalArea } from "../../core/geo/mod.ts";
import type { Rect } from "../../core/geo/mod.ts";
import {
  addCell,
  type BalanceOptions,
  type CellLoad,
  DEFAULT_BALANCE,
  readyToLeave,
  SpaceBalancer,
} from "../../mgr/balance/mod.ts";
import { crowd, type Entity, measure, narrowest, rng, splitPositions, uniform } from "./balance_world.ts";

const bounds: Rect = { minX: 0, minZ: 0, maxX: 2000, maxZ: 2000 };
const options: BalanceOptions = { ...DEFAULT_BALANCE, minWidth: 100 };

/** 1,000 entities crowding around (400, 400) over 1,000 spread evenly: 2.0 cores in all. */
function crowdedWorld(seed = 1): Entity[] {
  const random = rng(seed);
  return [...crowd(random, bounds, 400, 400, 120, 1000, 0.001), ...uniform(random, bounds, 1000, 0.001)];
}

interface Period {
  tree: BspNode;
  loads: Map<number, CellLoad>;
}

/** Runs `periods` balance periods over a static world; the first entry is the tree before any. */
function simulate(
  balancer: SpaceBalancer,
  tree: BspNode,
  entities: readonly Entity[],
  periods: number,
  retiring: ReadonlySet<number> = new Set(),
  withBounds = true,
): Period[] {
  const out: Period[] = [];
  for (let i = 0; i <= periods; i++) {
    const loads = measure(tree, entities, withBounds);
    out.push({ tree, loads });
    tree = balancer.balance(tree, bounds, loads, retiring);
  }
  return out;
}

/** The highest cell load over the mean, minus one (0.1 = the busiest cell carries 10 % over the mean). */
function spread(loads: Map<number, CellLoad>): number {
  const ls = [...loads.values()].map((l) => l.load);
  const mean = ls.reduce((s, l) => s + l, 0) / ls.length;
  return Math.max(...ls) / mean - 1;
}

/** Asserts minWidth, the space bounds and maxStep on every step of a run. */
function assertClamps(history: Period[], newCells: ReadonlySet<number> = new Set()): void {
  for (const [i, p] of history.entries()) {
    const cells = cellRects(p.tree, bounds);
    assert.ok(Math.abs(totalArea(cells) - 2000 * 2000) < 1e-3, `period ${i}: the cells cover the space exactly`);
    for (const c of cells) {
      const r = c.rect;
      assert.ok(r.minX >= 0 && r.minZ >= 0 && r.maxX <= 2000 && r.maxZ <= 2000, `period ${i}: cell ${c.id} inside`);
      const w = Math.min(r.maxX - r.minX, r.maxZ - r.minZ);
      if (!newCells.has(c.id)) assert.ok(w >= options.minWidth - 1e-9, `period ${i}: cell ${c.id} is ${w} m wide`);
      else assert.ok(w >= 0, `period ${i}: new cell ${c.id} turned inside out`);
    }
    if (i === 0) continue;
    const before = splitPositions(history[i - 1].tree);
    for (const [k, at] of splitPositions(p.tree)) {
      const was = before.get(k);
      if (was !== undefined) {
        assert.ok(Math.abs(at - was) <= options.maxStep + 1e-9, `period ${i}: ${k} moved ${at - was} m`);
      }
    }
  }
}

Deno.test("a crowd in one cell: the partitions follow it until the cells carry the same load", () => {
  const tree = buildBsp(bounds, [1, 2, 3, 4]);
  const history = simulate(new SpaceBalancer(options), tree, crowdedWorld(), 60);
  const spreads = history.map((p) => spread(p.loads));
  assert.ok(spreads[0] > 1.3, `the crowd starts in one cell (busiest ${spreads[0].toFixed(2)} over the mean)`);
  const within15 = spreads.findIndex((s) => s <= 0.15);
  const within5 = spreads.findIndex((s) => s <= 0.05);
  console.log(
    `  4 cells, crowd of 1,000 + 1,000 spread: start ${(spreads[0] * 100).toFixed(0)} % over the mean; ` +
      `within 15 % after ${within15} periods, within 5 % after ${within5}; ` +
      `after 60: ${(spreads[60] * 100).toFixed(1)} %`,
  );
  assert.ok(within15 > 0 && within15 <= 30, `within 15 % of the mean after ${within15} periods`);
  assert.ok(
    spreads.slice(40).every((s) => s <= 0.05),
    `stays within 5 %: ${spreads.slice(40).map((s) => s.toFixed(3))}`,
  );
  assertClamps(history);
});

Deno.test("the partitions settle: few reversals, and the steps shrink to nothing", () => {
  const tree = buildBsp(bounds, [1, 2, 3, 4]);
  const balancer = new SpaceBalancer(options);
  const history = simulate(balancer, tree, crowdedWorld(2), 80);
  const keys = [...splitPositions(tree).keys()];
  for (const k of keys) {
    const at = history.map((p) => splitPositions(p.tree).get(k)!);
    const moves = at.slice(1).map((a, i) => a - at[i]).filter((d) => d !== 0);
    const reversals = moves.slice(1).filter((d, i) => Math.sign(d) !== Math.sign(moves[i])).length;
    const late = Math.max(0, ...at.slice(50).map((a, i) => i === 0 ? 0 : Math.abs(a - at[50 + i - 1])));
    console.log(
      `  ${k}: ${at[0]} -> ${at[80].toFixed(1)} m, ${moves.length} moves, ${reversals} reversals, ` +
        `largest step after period 50 ${late.toFixed(2)} m`,
    );
    assert.ok(reversals <= 4, `${k} turned back ${reversals} times`);
    assert.ok(late <= 5, `${k} still steps ${late} m after 50 periods`);
  }
  assertClamps(history);
});

Deno.test("without entity-bound levels the partitions still converge, by width times load share", () => {
  const tree = buildBsp(bounds, [1, 2, 3, 4]);
  const history = simulate(new SpaceBalancer(options), tree, crowdedWorld(3), 80, new Set(), false);
  const spreads = history.map((p) => spread(p.loads));
  console.log(`  without levels: within 15 % after ${spreads.findIndex((s) => s <= 0.15)} periods`);
  assert.ok(spreads.slice(60).every((s) => s <= 0.15), `within 15 %: ${spreads.slice(60).map((s) => s.toFixed(3))}`);
  assertClamps(history);
});

Deno.test("one step without levels moves by the loaded side's width times the share to hand over", () => {
  const tree = buildBsp({ minX: 0, minZ: 0, maxX: 1000, maxZ: 100 }, [1, 2]);
  const b = { minX: 0, minZ: 0, maxX: 1000, maxZ: 100 };
  const loads = new Map([[1, { load: 0.6, reals: 60 }], [2, { load: 0.2, reals: 20 }]]);
  const moved = new SpaceBalancer({ ...options, maxStep: 1000 }).balance(tree, b, loads);
  // Half the difference (0.2) is a third of the left cell's 0.6: a third of its 500 m.
  assert.ok("at" in moved && Math.abs(moved.at - (500 - 500 / 3)) < 1e-9, JSON.stringify(moved));
  const capped = new SpaceBalancer(options).balance(tree, b, loads);
  assert.ok("at" in capped && capped.at === 450, "maxStep caps the move");
});

Deno.test("a move is clamped to minWidth and the space, and the input tree is never changed", () => {
  const b = { minX: 0, minZ: 0, maxX: 1000, maxZ: 100 };
  const tree = buildBsp(b, [1, 2]);
  const frozen = JSON.stringify(tree);
  // All the load at the far left edge of cell 1: levels say go all the way.
  const bounds1 = {
    minX: [1, 1, 1, 1, 1, 1],
    maxX: [1, 1, 1, 1, 1, 1],
    minZ: [50, 50, 50, 50, 50, 50],
    maxZ: [50, 50, 50, 50, 50, 50],
  };
  const loads = new Map([[1, { load: 1, reals: 10, bounds: bounds1 }], [2, { load: 0, reals: 0 }]]);
  const balancer = new SpaceBalancer({ ...options, maxStep: 1000, maxAggression: 4 });
  let t: BspNode = tree;
  for (let i = 0; i < 5; i++) t = balancer.balance(t, b, loads);
  assert.equal(JSON.stringify(tree), frozen, "the input tree is unchanged");
  assert.ok("at" in t && t.at === 100, `stops at minWidth from the space's edge: ${JSON.stringify(t)}`);
});

Deno.test("load differences inside the deadband move nothing", () => {
  const tree = buildBsp(bounds, [1, 2, 3, 4]);
  const balancer = new SpaceBalancer({ ...options, deadband: 0.05 });
  const loads = new Map([1, 2, 3, 4].map((id) => [id, { load: id === 1 ? 0.34 : 0.3, reals: 30 }]));
  for (let i = 0; i < 10; i++) assert.equal(balancer.balance(tree, bounds, loads), tree, "same tree object");
  assert.deepEqual(balancer.partitions(), []);
  const over = new Map(loads);
  over.set(1, { load: 0.36, reals: 30 });
  assert.notEqual(balancer.balance(tree, bounds, over), tree, "a difference past the deadband moves");
});

Deno.test("at light loads the tolerance decides: a crowd at 1 % of a core moves a partition, noise does not", () => {
  const two = buildBsp(bounds, [1, 2]);
  const balancer = new SpaceBalancer(options);
  const light = new Map([[1, { load: 0.008, reals: 600 }], [2, { load: 0.001, reals: 30 }]]);
  assert.notEqual(balancer.balance(two, bounds, light), two, "a sevenfold difference moves, however light");
  const calm = new SpaceBalancer(options);
  const noise = new Map([[1, { load: 0.0105, reals: 300 }], [2, { load: 0.0100, reals: 300 }]]);
  for (let i = 0; i < 10; i++) assert.equal(calm.balance(two, bounds, noise), two, "5 % apart is noise");
  const heavy = new Map([[1, { load: 0.52, reals: 300 }], [2, { load: 0.5, reals: 300 }]]);
  assert.equal(calm.balance(two, bounds, heavy), two, "4 % apart at half a core is noise too");
});

Deno.test("a cell added with addCell starts with zero width and grows by balancing", () => {
  const b2 = buildBsp(bounds, [1, 2]);
  const tree = addCell(b2, bounds, 1, { id: 3, cellapp: 3 });
  const start = cellRects(tree, bounds);
  assert.deepEqual(start.map((c) => c.id), [1, 3, 2]);
  // Cell 1 is 1000 x 2000: its longer side is Z, so the new cell sits on its max Z edge.
  assert.deepEqual(start[1].rect, { minX: 0, minZ: 2000, maxX: 1000, maxZ: 2000 });
  assert.deepEqual(start[0].rect, { minX: 0, minZ: 0, maxX: 1000, maxZ: 2000 }, "cell 1 keeps its rect");
  assert.throws(() => addCell(tree, bounds, 9, { id: 4, cellapp: 4 }), /no cell 9/);
  assert.throws(() => addCell(tree, bounds, 1, { id: 2, cellapp: 4 }), /already has a cell 2/);

  const history = simulate(new SpaceBalancer(options), tree, crowdedWorld(4), 60);
  const widths = history.map((p) => narrowest(p.tree, bounds).get(3)!);
  assert.equal(widths[0], 0);
  assert.ok(widths[1] > 0 && widths[1] < options.minWidth, `first step grows it a little: ${widths[1]}`);
  for (let i = 1; i < 8; i++) assert.ok(widths[i + 1] > widths[i], `keeps growing: ${widths.slice(0, 10)}`);
  const final = history[60].loads;
  const share = final.get(3)!.load / 2;
  console.log(
    `  new cell: ${widths[10].toFixed(0)} m wide after 10 periods, carries ${
      (share * 100).toFixed(0)
    } % after 60; busiest ${(spread(final) * 100).toFixed(1)} % over the mean`,
  );
  assert.ok(spread(final) <= 0.1, `the three cells share the load: ${[...final.values()].map((l) => l.load)}`);
  assertClamps(history, new Set([3]));
});

Deno.test("a retiring cell shrinks to zero, then readyToLeave names it and removeCell takes it out", () => {
  const tree = buildBsp(bounds, [1, 2, 3]);
  const entities = crowdedWorld(5);
  const retiring = new Set([2]);
  const balancer = new SpaceBalancer(options);
  let t = tree;
  let periods = 0;
  const widths: number[] = [];
  while (readyToLeave(t, bounds, retiring, measure(t, entities)).length === 0) {
    const loads = measure(t, entities);
    widths.push(narrowest(t, bounds).get(2)!);
    if (widths.at(-1)! <= 0) assert.equal(loads.get(2)!.reals, 0, "a cell of no width holds no reals");
    t = balancer.balance(t, bounds, loads, retiring);
    assert.ok(++periods < 100, "the cell shrinks to nothing");
  }
  for (let i = 1; i < widths.length; i++) {
    assert.ok(widths[i - 1] - widths[i] <= options.maxStep + 1e-9 && widths[i] < widths[i - 1], `${widths}`);
  }
  console.log(`  retiring cell: ${widths[0]} m to 0 in ${periods} periods`);
  assert.deepEqual(readyToLeave(t, bounds, retiring, measure(t, entities)), [2]);
  const loads = measure(t, entities);
  loads.set(2, { load: 0, reals: 1 });
  assert.deepEqual(readyToLeave(t, bounds, retiring, loads), [], "not while it still reports a real");
  const left = removeCell(t, 2)!;
  const cells = cellRects(left, bounds);
  assert.deepEqual(cells.map((c) => c.id), [1, 3]);
  assert.ok(Math.abs(totalArea(cells) - 2000 * 2000) < 1e-6);
  assert.equal(measure(left, entities).size, 2);
});

Deno.test("a partition's aggression survives a tree change elsewhere and is forgotten when it goes", () => {
  const tree = buildBsp(bounds, [1, 2, 3, 4]);
  const balancer = new SpaceBalancer({ ...options, maxStep: 20 });
  const entities = crowdedWorld(6);
  let t = tree;
  for (let i = 0; i < 4; i++) t = balancer.balance(t, bounds, measure(t, entities));
  const before = balancer.partition("z", [1], [2]);
  assert.ok(before && before.aggression > options.aggression, `it grew: ${JSON.stringify(before)}`);
  assert.ok(balancer.partition("x", [1, 2], [3, 4]), "the root partition has state");
  t = addCell(t, bounds, 4, { id: 5, cellapp: 5 });
  t = balancer.balance(t, bounds, measure(t, entities));
  const after = balancer.partition("z", [1], [2]);
  assert.ok(
    after && after.aggression > before.aggression,
    `it kept growing: ${before.aggression} -> ${after?.aggression}`,
  );
  assert.equal(balancer.partition("x", [1, 2], [3, 4]), undefined, "the old root partition is forgotten");
});

Deno.test("a crowd that walks to another quadrant is followed there", () => {
  const random = rng(7);
  const background = uniform(random, bounds, 1000, 0.001);
  const walkers = crowd(random, bounds, 400, 400, 120, 1000, 0.001);
  const balancer = new SpaceBalancer(options);
  let tree = buildBsp(bounds, [1, 2, 3, 4]);
  const history: Period[] = [];
  const spreads: number[] = [];
  // 30 s gathered at (400, 400), 60 s walking to (1600, 1600) (20 m/s on each axis), 60 s there.
  for (let t = 0; t < 150; t++) {
    const step = t < 30 || t >= 90 ? 0 : 20;
    for (const w of walkers) {
      w.x = Math.min(1999, w.x + step);
      w.z = Math.min(1999, w.z + step);
    }
    const loads = measure(tree, [...background, ...walkers]);
    history.push({ tree, loads });
    spreads.push(spread(loads));
    tree = balancer.balance(tree, bounds, loads);
  }
  const arrived = spreads.slice(90).findIndex((s) => s <= 0.15);
  console.log(
    `  walking crowd: ${(spreads[89] * 100).toFixed(0)} % over the mean on arrival, within 15 % ` +
      `${arrived} s later, ${(spreads[149] * 100).toFixed(1)} % at the end; worst while walking ` +
      `${(Math.max(...spreads.slice(40, 90)) * 100).toFixed(0)} %; root partition at ` +
      `${splitPositions(tree).get("x:1,2|3,4")!.toFixed(0)} m`,
  );
  assert.ok(arrived >= 0 && arrived <= 30, `within 15 % of the mean ${arrived} s after arriving`);
  const worst = Math.max(...spreads.slice(40, 90));
  assert.ok(worst <= 0.25, `the partitions keep up with the walk: ${(worst * 100).toFixed(0)} % over the mean`);
  const root = splitPositions(tree).get("x:1,2|3,4")!;
  assert.ok(root > 1300, `the root partition followed the crowd to high X: ${root}`);
  assert.ok(spreads.slice(130).every((s) => s <= 0.05), `settled: ${spreads.slice(130).map((s) => s.toFixed(3))}`);
  assertClamps(history);
});

Deno.test("noisy load reports: the partitions jitter little around where the load is even", () => {
  const tree = buildBsp(bounds, [1, 2, 3, 4]);
  const balancer = new SpaceBalancer(options);
  const entities = crowdedWorld(8);
  const random = rng(9);
  // Each report off by up to ±5 %, as a smoothed busy-time measure may be.
  const noisy = (loads: Map<number, CellLoad>) =>
    new Map([...loads].map(([id, l]) => [id, { ...l, load: l.load * (1 + (random() - 0.5) * 0.1) }]));
  let t = tree;
  const positions: Map<string, number>[] = [];
  const spreads: number[] = [];
  for (let i = 0; i < 120; i++) {
    const loads = measure(t, entities);
    spreads.push(spread(loads));
    positions.push(splitPositions(t));
    t = balancer.balance(t, bounds, noisy(loads));
  }
  for (const k of positions[0].keys()) {
    const late = positions.slice(60).map((p) => p.get(k)!);
    const range = Math.max(...late) - Math.min(...late);
    console.log(`  noisy ${k}: moves within ${range.toFixed(1)} m over the last 60 periods`);
    assert.ok(range < 30, `${k} wanders over ${range} m`);
  }
  const worst = Math.max(...spreads.slice(60));
  console.log(`  noisy: busiest cell at most ${(worst * 100).toFixed(1)} % over the mean over the last 60 periods`);
  assert.ok(worst <= 0.05, `busiest ${worst} over the mean`);
});

Deno.test("draining the crowded cell: it closes whatever its load, and the three left share the crowd", () => {
  const entities = crowdedWorld(10);
  const balancer = new SpaceBalancer(options);
  const retiring = new Set([1]);
  let t = buildBsp(bounds, [1, 2, 3, 4]);
  const history: Period[] = [];
  for (let i = 0; i < 60 && readyToLeave(t, bounds, retiring, measure(t, entities)).length === 0; i++) {
    const loads = measure(t, entities);
    history.push({ tree: t, loads });
    t = balancer.balance(t, bounds, loads, retiring);
  }
  const closedAfter = history.length;
  assert.deepEqual(readyToLeave(t, bounds, retiring, measure(t, entities)), [1], `closed after ${closedAfter}`);
  assertClamps(history, retiring);
  t = removeCell(t, 1)!;
  const after = simulate(balancer, t, entities, 60);
  const spreads = after.map((p) => spread(p.loads));
  console.log(
    `  drain: the crowded cell closed in ${closedAfter} periods; the other three within ` +
      `${(spreads[60] * 100).toFixed(1)} % of the mean 60 periods later`,
  );
  assert.ok(closedAfter <= 1000 / options.maxStep + 1, `${closedAfter} periods`);
  assert.ok(spreads[60] <= 0.05, `after: ${spreads.slice(50).map((s) => s.toFixed(3))}`);
  assertClamps(after);
});
