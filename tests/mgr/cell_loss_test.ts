/** What the cellappmgr does to a space's tree when a cellapp dies (Spaces.onCellAppLeft). */
import assert from "node:assert/strict";
import { Registry } from "../../mgr/registry.ts";
import { Spaces } from "../../mgr/spaces.ts";
import { type BspNode, buildBsp, cellRects } from "../../core/geo/mod.ts";
import { memoryLogger } from "../../testing/log.ts";

const bounds = { minX: 0, minZ: 0, maxX: 100, maxZ: 100 };

function spaces(): Spaces {
  const log = memoryLogger();
  return new Spaces(new Registry(log), log, () => Promise.reject(new Error("no ids in this test")));
}

Deno.test("a dead cellapp's cells leave the tree: only their neighbours grow, the other cells keep their rects", () => {
  const s = spaces();
  // Load balancing moved the partitions: cell 1 (cellapp 1) is narrow, cells 2 and 3 share the rest, 4 is a strip.
  const tree: BspNode = {
    axis: "x",
    at: 30,
    left: { cell: { id: 1, cellapp: 1 } },
    right: {
      axis: "z",
      at: 80,
      left: { axis: "x", at: 60, left: { cell: { id: 2, cellapp: 2 } }, right: { cell: { id: 3, cellapp: 1 } } },
      right: { cell: { id: 4, cellapp: 1 } },
    },
  };
  s.adopt(1, [{ spaceId: 5, bounds: [0, 0, 100, 100], tree, isDefault: false, cellapps: [] }]);
  const before = s.all.get(5)!.cells();
  assert.deepEqual(s.onCellAppLeft(2), [], "the space keeps cells");
  const after = s.all.get(5)!.cells();
  assert.deepEqual(after.map((c) => c.id), [1, 3, 4]);
  const rect = (id: number, cells = after) => cells.find((c) => c.id === id)!.rect;
  assert.deepEqual(rect(1), rect(1, before), "cell 1, not a neighbour across the partition, keeps its rect");
  assert.deepEqual(rect(4), rect(4, before), "cell 4 keeps its rect");
  assert.deepEqual(rect(3), { minX: 30, minZ: 0, maxX: 100, maxZ: 80 }, "cell 3 took cell 2's area");
  assert.deepEqual(s.onCellAppLeft(3), [], "a cellapp with no cell changes nothing");
  assert.deepEqual(s.all.get(5)!.cells(), after);
});

Deno.test("a space that lost its only cell is kept, bare, with its id (the default space too)", () => {
  const s = spaces();
  s.adopt(1, [{ spaceId: 1, bounds: [0, 0, 100, 100], tree: buildBsp(bounds, [1]), isDefault: true, cellapps: [] }]);
  s.adopt(1, [{
    spaceId: 6,
    bounds: [0, 0, 100, 100],
    tree: buildBsp(bounds, [1, 1]),
    isDefault: false,
    cellapps: [],
  }]);
  const bare = s.onCellAppLeft(1);
  assert.deepEqual(bare.map((b) => b.id).sort(), [1, 6]);
  assert.deepEqual([...s.all.keys()].sort(), [1, 6], "both spaces stay known");
  assert.ok(s.all.get(1)!.bare && s.all.get(1)!.isDefault);
  assert.ok(s.all.get(6)!.bare);
  assert.deepEqual(
    cellRects(s.all.get(6)!.tree, bounds).map((c) => c.cellapp),
    [1, 1],
    "the bare tree names its dead cells until a new cell replaces them",
  );
});
