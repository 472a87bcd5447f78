/**
 * A cell's load for the balancer (docs/architecture.md, "Balancing"): each real's CPU, charged once however sections
 * nest, and the cell's entity load and entity-bound levels as its report carries them. Cells in-process, no cellapp.
 */
import assert from "node:assert/strict";
import { createRegistry, defineEntity } from "../../core/def/mod.ts";
import { CellScript } from "../../core/script.ts";
import { Cell } from "../../cell/cell.ts";
import type { Entity } from "../../cell/entity.ts";
import { ENTITY_LOAD_FLOOR, ENTITY_LOAD_TAU_MS, entityBounds, foldLoads } from "../../cell/load/cell_load.ts";
import { sectionDepth } from "../../cell/load/entity_load.ts";
import { BOUND_LEVELS, MgrMsg } from "../../core/wire/mod.ts";
import { cellsOf } from "../../testing/two_cells.ts";
import { loneCell } from "../../testing/lone_cell.ts";

const Npc = defineEntity({ name: "Npc", hasCell: true, properties: {} });
const registry = createRegistry({ entities: [Npc] });

function burn(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) { /* busy */ }
}

/** Burns 2 ms each tick when its id is even, nothing otherwise. */
class Burner extends CellScript {
  override onTick(): void {
    if (this.self.id % 2 === 0) burn(2);
  }
}

/** Burns 20 ms for each entity entering its range trigger; throws on its timer. */
class Watcher extends CellScript {
  override onEnteredRange(): void {
    burn(20);
  }
  override onTimer(): void {
    throw new Error("a script error must not unbalance the load sections");
  }
}

function oneCell(scripts: Record<string, unknown>): Cell {
  return loneCell({ registry, scripts, spaceId: 3, bounds: [0, 0, 1000, 1000], isDefault: false }).cell;
}

Deno.test("a real whose script burns CPU reports a higher load than an idle one", () => {
  const cell = oneCell({ Npc: Burner });
  const busy = cell.createEntity("Npc", { x: 10, y: 0, z: 10 }, {}, undefined, 2);
  const idle = cell.createEntity("Npc", { x: 20, y: 0, z: 10 }, {}, undefined, 3);
  const start = performance.now();
  // At least two folds, 200 ms apart or more, of real ticks.
  for (let fold = 0; fold < 2; fold++) {
    const from = performance.now();
    while (performance.now() - from < 250) cell.tick(100);
    cell.report();
  }
  const wall = performance.now() - start;
  assert.equal(sectionDepth(), 0);
  // It burns 2 ms a tick of a loop that does little else: most of the wall time.
  assert.ok(busy.cpuLoad > 0.5, `busy real's load ${busy.cpuLoad} over ${wall} ms`);
  assert.ok(idle.cpuLoad < busy.cpuLoad / 20, `idle ${idle.cpuLoad} vs busy ${busy.cpuLoad}`);
  const r = cell.report();
  assert.ok(Math.abs(r.entityLoad! - (busy.cpuLoad + Math.max(idle.cpuLoad, ENTITY_LOAD_FLOOR))) < 1e-3);
});

Deno.test("nested sections charge each entity its own time, once; a script that throws leaves them balanced", () => {
  const cell = oneCell({ Npc: Watcher });
  const watcher = cell.createEntity("Npc", { x: 0, y: 0, z: 0 });
  watcher.addRangeTrigger(5);
  watcher.addTimer(0.1, 0.1);
  const mover = cell.createEntity("Npc", { x: 50, y: 0, z: 0 });
  // Moving the mover is its cost; what its move fires on the watcher's trigger is the watcher's.
  mover.moveToPoint({ x: 0, y: 0, z: 0 }, 1000);
  cell.tick(100);
  assert.equal(sectionDepth(), 0);
  const charged = (e: Entity) => cell.loadMeter.cpuMsOf(e);
  assert.ok(charged(watcher) >= 20, `watcher charged ${charged(watcher)} ms`);
  // Its own move costs microseconds (a first, cold run: a few milliseconds at most), not the watcher's 20.
  assert.ok(charged(mover) < 10, `mover charged ${charged(mover)} ms`);
  assert.ok(cell.scriptErrors >= 1);
});

/** Ten reals of `cell` at x = base, base + 10, ..., z = 90 - 10k (so Z runs the other way). */
function tenReals(cell: Cell, base: number): Entity[] {
  return Array.from({ length: 10 }, (_, k) => cell.createEntity("Npc", { x: base + 10 * k, y: 0, z: 90 - 10 * k }));
}

Deno.test("entity bounds of a known placement: equal weights, then one heavy real; ghosts and triggers skipped", async () => {
  const tree = {
    axis: "x" as const,
    at: 100,
    left: { cell: { id: 1, cellapp: 1 } },
    right: { cell: { id: 2, cellapp: 2 } },
  };
  const h = cellsOf({ registry }, [0, 0, 200, 100], tree);
  const [a, b] = [h.cell(1), h.cell(2)];
  const reals = tenReals(b, 105);
  // Reals of the other cell near the border, ghosted into b, and a trigger: nodes the walk must skip.
  for (const z of [5, 50, 95]) a.createEntity("Npc", { x: 95, y: 0, z });
  reals[3].addRangeTrigger(30);
  await h.tick(3);
  assert.equal(b.ghosts.size, 3);

  // What the ticks charged is forgotten (a first fold, then a second with nothing charged since): every real
  // weighs the floor.
  b.loadMeter.sample(performance.now() + 1000);
  const r = b.loadMeter.sample(performance.now() + 2000);
  assert.ok(Math.abs(r.entityLoad - 10 * ENTITY_LOAD_FLOOR) < 1e-9, `entity load ${r.entityLoad}`);
  // 10 equal reals: level f is reached at real ceil(10 f), the bound halfway to the next one.
  assert.deepEqual(r.entityBounds.minX, [110, 110, 120, 130, 140, 150]);
  assert.deepEqual(r.entityBounds.maxX, [190, 190, 180, 170, 160, 150]);
  assert.deepEqual(r.entityBounds.minZ, [5, 5, 15, 25, 35, 45]);
  assert.deepEqual(r.entityBounds.maxZ, [85, 85, 75, 65, 55, 45]);

  // The last real carries half the load: from the max-X edge every level is reached at it.
  for (const e of reals) e.cpuLoad = 0.001;
  reals[9].cpuLoad = 0.009;
  const bounds = entityBounds(b.rangeList, 0.018);
  assert.deepEqual(bounds.maxX, new Array(BOUND_LEVELS.length).fill(190));
  assert.deepEqual(bounds.minX, [110, 120, 140, 160, 180, 190]);
  assert.deepEqual(bounds.minZ, new Array(BOUND_LEVELS.length).fill(5)); // the heavy real is at z = 0, the next at 10
  // It fits the wire: the cellappmgr would take it.
  const report = { load: 0.1, peerBytesOut: 0, cells: [{ ...b.report(), entityBounds: bounds }] };
  assert.equal(MgrMsg.loadReport.check([report]), null);
});

Deno.test("a cell without reals reports no bounds and no load", () => {
  const cell = oneCell({});
  const r = cell.loadMeter.sample(performance.now() + 1000);
  assert.equal(r.entityLoad, 0);
  assert.deepEqual(r.entityBounds, { minX: [], maxX: [], minZ: [], maxZ: [] });
  cell.createEntity("Npc", { x: 7, y: 0, z: 3 });
  const one = cell.loadMeter.sample(performance.now() + 2000).entityBounds;
  assert.deepEqual(one, {
    minX: Array(6).fill(7),
    maxX: Array(6).fill(7),
    minZ: Array(6).fill(3),
    maxZ: Array(6).fill(3),
  });
});

Deno.test("a real's load: its first two folds set it, later ones smooth it over seconds", () => {
  const e = { cpuLoad: 0, cpuFolds: 0, isReal: true, id: 1, x: 0, z: 0, rangeNode: null };
  const charged = (ms: number) => () => ms;
  foldLoads([e], charged(100), 1000); // arrived during the period: a part of it
  assert.equal(e.cpuLoad, 0.1);
  assert.equal(foldLoads([e], charged(500), 1000), 0.5);
  // It stops: the load decays with the time constant, not at once.
  foldLoads([e], charged(0), 1000);
  assert.ok(Math.abs(e.cpuLoad - 0.5 * Math.exp(-1000 / ENTITY_LOAD_TAU_MS)) < 1e-12);
  // An idle real still weighs the floor.
  assert.equal(foldLoads([{ ...e, cpuLoad: 0 }], charged(0), 1000), ENTITY_LOAD_FLOOR);
});

Deno.test("time charged while the process waited for a core is taken at the tick's CPU share", () => {
  const cell = loneCell({ registry }).cell;
  const e = cell.createEntity("Npc", { x: 0, y: 0, z: 0 });
  const slot = e.rangeNode!.idx;
  cell.loadMeter.cpuArray(slot)[slot] += 10;
  assert.equal(cell.loadMeter.cpuMsOf(e), 10, "unsettled charges count as they are");
  cell.loadMeter.settle(0.25); // the tick had a core a quarter of its wall time
  assert.equal(cell.loadMeter.cpuMsOf(e), 2.5);
  cell.loadMeter.cpuArray(slot)[slot] += 4;
  cell.loadMeter.settle(1.6); // other threads' CPU too: never more than what was charged
  assert.equal(cell.loadMeter.cpuMsOf(e), 6.5);
  cell.loadMeter.clear(e);
  assert.equal(cell.loadMeter.cpuMsOf(e), 0);
});
