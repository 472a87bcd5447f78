import assert from "node:assert/strict";
import {
  type BspNode,
  buildBsp,
  cellIndexAt,
  cellRects,
  checkBsp,
  neighbours,
  removeCell,
  totalArea,
} from "../../core/geo/mod.ts";
import { rectArea, rectsTouch } from "../../core/geo/mod.ts";

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

Deno.test("removeCell: the removed cell's sibling takes its area, every other cell keeps its rect exactly", () => {
  const tree = buildBsp(bounds, [1, 2, 3, 4, 5, 6, 7, 8]);
  const before = cellRects(tree, bounds);
  const json = JSON.stringify(tree);
  const sibling = new Map([[1, 2], [2, 1], [3, 4], [4, 3], [5, 6], [6, 5], [7, 8], [8, 7]]);
  for (const gone of before) {
    const after = removeCell(tree, gone.id)!;
    assert.equal(JSON.stringify(tree), json, "the tree given is not changed");
    const cells = cellRects(after, bounds);
    assert.equal(totalArea(cells), 100 * 100, `without cell ${gone.id} the cells still cover the space`);
    assert.deepEqual(cells.map((c) => c.id), before.filter((c) => c !== gone).map((c) => c.id));
    for (const c of cells) {
      const was = before.find((b) => b.id === c.id)!;
      if (c.id === sibling.get(gone.id)) {
        assert.ok(rectsTouch(was.rect, gone.rect), "the cell that grows is a neighbour of the removed one");
        assert.equal(rectArea(c.rect), rectArea(was.rect) + rectArea(gone.rect));
      } else {
        assert.deepEqual(c.rect, was.rect, `cell ${c.id} keeps its rect when cell ${gone.id} goes`);
      }
    }
    assert.equal(checkBsp(after), null);
  }
});

Deno.test("removeCell: a removed subtree's neighbours grow, the rest of the space is unchanged", () => {
  // 1 | (2 over 3): removing 1 gives its whole area to the subtree of 2 and 3, which both grow along x.
  const tree = {
    axis: "x" as const,
    at: 30,
    left: leaf(1),
    right: { axis: "z" as const, at: 50, left: leaf(2), right: leaf(3) },
  };
  const cells = cellRects(removeCell(tree, 1)!, bounds);
  assert.deepEqual(cells.map((c) => [c.id, c.rect]), [
    [2, { minX: 0, minZ: 0, maxX: 100, maxZ: 50 }],
    [3, { minX: 0, minZ: 50, maxX: 100, maxZ: 100 }],
  ]);
  // ((1 | 2) over 3) | 4: removing 2 grows 1 only; 3 and 4 keep theirs.
  const deep = {
    axis: "x" as const,
    at: 60,
    left: {
      axis: "z" as const,
      at: 40,
      left: { axis: "x" as const, at: 20, left: leaf(1), right: leaf(2) },
      right: leaf(3),
    },
    right: leaf(4),
  };
  const before = cellRects(deep, bounds);
  const after = cellRects(removeCell(deep, 2)!, bounds);
  assert.deepEqual(after.find((c) => c.id === 1)!.rect, { minX: 0, minZ: 0, maxX: 60, maxZ: 40 });
  for (const id of [3, 4]) {
    assert.deepEqual(
      after.find((c) => c.id === id)!.rect,
      before.find((c) => c.id === id)!.rect,
    );
  }
});

Deno.test("removeCell: removing all but one leaves one cell covering the space; the last one gives null", () => {
  let tree: BspNode | null = buildBsp(bounds, [1, 2, 1, 2, 3], [4, 9, 2, 7, 5]);
  for (const id of [9, 4, 5, 2]) {
    tree = removeCell(tree!, id);
    assert.equal(totalArea(cellRects(tree!, bounds)), 100 * 100);
  }
  assert.deepEqual(cellRects(tree!, bounds), [{ id: 7, cellapp: 2, rect: bounds }]);
  assert.equal(removeCell(tree!, 7), null);
  assert.throws(() => removeCell(tree!, 4), /no cell 4/);
  assert.throws(() => removeCell(buildBsp(bounds, [1, 2]), 3), /no cell 3/);
});

function leaf(id: number): BspNode {
  return { cell: { id, cellapp: id } };
}
