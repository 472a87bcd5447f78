import assert from "node:assert/strict";
import { buildBsp, cellIndexAt, cellRects, checkBsp, neighbours, totalArea } from "../../core/geo/bsp.ts";

const bounds = { minX: 0, minZ: 0, maxX: 100, maxZ: 100 };

Deno.test("buildBsp numbers the cells 1..n, keeps given ids, and splits by area", () => {
  const tree = buildBsp(bounds, [7, 8, 7, 8]);
  const cells = cellRects(tree, bounds);
  assert.deepEqual(cells.map((c) => [c.id, c.cellapp]), [[1, 7], [2, 8], [3, 7], [4, 8]]);
  assert.equal(totalArea(cells), 100 * 100);
  assert.equal(cells[cellIndexAt(tree, 75, 25)].id, 3);
  assert.deepEqual(neighbours(cells)[0], [1, 2, 3], "cell 1 touches the three others (corner included)");
  const kept = buildBsp(bounds, [8, 8], [2, 4]);
  assert.deepEqual(cellRects(kept, bounds).map((c) => [c.id, c.cellapp]), [[2, 8], [4, 8]]);
  assert.throws(() => buildBsp(bounds, [1, 2], [3, 3]), /its own id/);
  assert.equal(checkBsp(JSON.parse(JSON.stringify(tree))), null, "the JSON form checks");
});

Deno.test("checkBsp wants every cell with a cellapp and an id of its own", () => {
  const split = (l: unknown, r: unknown) => ({ axis: "x", at: 1, left: l, right: r });
  assert.equal(checkBsp({ cell: { id: 1, cellapp: 1 } }), null);
  assert.match(checkBsp({ cell: { cellapp: 1 } })!, /without an id/);
  assert.match(checkBsp({ cell: { id: 0, cellapp: 1 } })!, /without an id/);
  assert.match(checkBsp({ cell: { id: 1 } })!, /without a cellapp/);
  assert.match(checkBsp(split({ cell: { id: 1, cellapp: 1 } }, { cell: { id: 1, cellapp: 2 } }))!, /used twice/);
  assert.equal(checkBsp(split({ cell: { id: 1, cellapp: 1 } }, { cell: { id: 2, cellapp: 1 } })), null);
});
