import assert from "node:assert/strict";
import { loadWithin, shiftDepth } from "../../mgr/balance/levels.ts";

// Levels at depths 10, 20, 40, 60, 80, 100 for BOUND_LEVELS 0.05, 0.1, 0.2, 0.3, 0.4, 0.5; the cell is 300 m wide.
const cell = { load: 1, depth: 300, levels: [10, 20, 40, 60, 80, 100] };

Deno.test("loadWithin interpolates between the levels, then to the whole load at the far edge", () => {
  assert.equal(loadWithin(cell, 0), 0);
  assert.equal(loadWithin(cell, 10), 0.05);
  assert.ok(Math.abs(loadWithin(cell, 50) - 0.25) < 1e-12);
  assert.equal(loadWithin(cell, 100), 0.5);
  assert.ok(Math.abs(loadWithin(cell, 200) - 0.75) < 1e-12, "half way from the last level to the far edge");
  assert.equal(loadWithin(cell, 400), 1);
  assert.equal(loadWithin({ load: 1, depth: 300, levels: [] }, 100), 0, "a cell without reals hands over nothing");
  assert.ok(Math.abs(loadWithin({ load: 0.6, depth: 300 }, 100) - 0.2) < 1e-12, "unreported: spread evenly");
});

Deno.test("shiftDepth finds how deep the partition must go, over all the cells touching it", () => {
  assert.ok(Math.abs(shiftDepth([cell], 0.25) - 50) < 1e-5);
  // Two cells side by side on the partition: each hands over half.
  const other = { load: 1, depth: 300, levels: [5, 10, 20, 30, 40, 50] };
  const d = shiftDepth([cell, other], 0.5);
  assert.ok(Math.abs(loadWithin(cell, d) + loadWithin(other, d) - 0.5) < 1e-5, `depth ${d}`);
  assert.ok(d > 20 && d < 50, `between the two cells' own answers: ${d}`);
  assert.ok(Math.abs(shiftDepth([cell], 5) - 300) < 1e-5, "asked for more than there is: all of it");
  assert.equal(shiftDepth([{ load: 1, depth: 300, levels: [] }], 0.5), 0, "nothing to hand over: no move");
});
