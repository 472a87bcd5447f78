import assert from "node:assert/strict";
import { buildBsp } from "../../core/geo/mod.ts";
import type { Rect } from "../../core/geo/mod.ts";
import { addCell, type CellLoad, DEFAULT_CELL_PLAN, planAdd, planRetire } from "../../mgr/balance/mod.ts";

const bounds: Rect = { minX: 0, minZ: 0, maxX: 2000, maxZ: 2000 };

function cellLoads(entries: [number, number][]): Map<number, CellLoad> {
  return new Map(entries.map(([id, load]) => [id, { load, reals: Math.round(load * 1000) }]));
}

Deno.test("planAdd splits the busiest cell onto the least loaded cellapp that runs none of the space", () => {
  // Cells 1 and 2 on cellapps 10 and 11.
  const tree = buildBsp(bounds, [10, 11]);
  const loads = cellLoads([[1, 0.7], [2, 0.9]]);
  const cluster = [{ id: 10, load: 0.75 }, { id: 11, load: 0.95 }, { id: 12, load: 0.4 }, { id: 13, load: 0.1 }];
  assert.deepEqual(planAdd(tree, bounds, loads, cluster), { split: 2, cellapp: 13 });

  const calm = [{ id: 10, load: 0.7 }, { id: 11, load: 0.85 }, { id: 13, load: 0.1 }];
  assert.equal(planAdd(tree, bounds, loads, calm), null, "mean 0.775 is not above 0.8");
  const busy = [{ id: 10, load: 0.75 }, { id: 11, load: 0.95 }, { id: 12, load: 0.5 }, { id: 13, load: 0.9 }];
  assert.equal(planAdd(tree, bounds, loads, busy), null, "no cellapp below 0.5 has room");
  assert.equal(planAdd(tree, bounds, loads, cluster, new Set([1])), null, "not while a cell retires");
  assert.equal(planAdd(tree, bounds, cellLoads([[1, 0.7]]), cluster), null, "not before every cell has reported");
  assert.equal(
    planAdd(tree, bounds, loads, cluster.filter((a) => a.id !== 11)),
    null,
    "not without the load of every cellapp the space uses",
  );
  const higher = { ...DEFAULT_CELL_PLAN, addAbove: 0.9 };
  assert.equal(planAdd(tree, bounds, loads, cluster, new Set(), higher), null, "the threshold is an option");
});

Deno.test("planAdd keeps one cell per cellapp: an idle cellapp already in the space is not chosen", () => {
  const tree = buildBsp(bounds, [10, 11, 12]);
  const loads = cellLoads([[1, 0.95], [2, 0.9], [3, 0.05]]);
  const cluster = [{ id: 10, load: 1.0 }, { id: 11, load: 1.0 }, { id: 12, load: 0.45 }, { id: 14, load: 0.3 }];
  assert.deepEqual(planAdd(tree, bounds, loads, cluster), { split: 1, cellapp: 14 }, "12 runs cell 3 already");
  assert.equal(planAdd(tree, bounds, loads, cluster.slice(0, 3)), null, "only cellapps of the space have room");
});

Deno.test("planAdd waits while a new cell has no width yet", () => {
  const tree = addCell(buildBsp(bounds, [10, 11]), bounds, 2, { id: 3, cellapp: 12 });
  const loads = cellLoads([[1, 0.9], [2, 0.9], [3, 0]]);
  const cluster = [{ id: 10, load: 0.9 }, { id: 11, load: 0.9 }, { id: 12, load: 0.1 }, { id: 13, load: 0.1 }];
  assert.equal(planAdd(tree, bounds, loads, cluster), null);
});

Deno.test("planRetire retires the least loaded cell of a quiet space, with hysteresis", () => {
  const tree = buildBsp(bounds, [10, 11, 12]);
  assert.equal(planRetire(tree, cellLoads([[1, 0.05], [2, 0.02], [3, 0.1]])), 2);
  assert.equal(planRetire(tree, cellLoads([[1, 0.05], [2, 0.05], [3, 0.05]])), 3, "the newest of equals");
  assert.equal(planRetire(tree, cellLoads([[1, 0.3], [2, 0.1], [3, 0.3]])), null, "mean 0.23 is not below 0.2");
  assert.equal(planRetire(tree, cellLoads([[1, 0.05], [2, 0.02]])), null, "not before every cell has reported");
  assert.equal(planRetire(tree, cellLoads([[1, 0.05], [2, 0.02], [3, 0.1]]), new Set([1])), null, "one at a time");
  assert.equal(planRetire(buildBsp(bounds, [10]), cellLoads([[1, 0]])), null, "a space keeps one cell");
  // Mean 0.19 over two cells: the one left would carry 0.38, below the midpoint 0.5 of 0.2 and 0.8.
  const two = buildBsp(bounds, [10, 11]);
  assert.equal(planRetire(two, cellLoads([[1, 0.19], [2, 0.19]])), 2);
  const close = { ...DEFAULT_CELL_PLAN, addAbove: 0.3 };
  assert.equal(planRetire(two, cellLoads([[1, 0.19], [2, 0.19]]), new Set(), close), null, "0.38 is past 0.25");
});
