/**
 * Scripts see their space (bounds, their cell, the cells touching it) and
 * create entities at a point: in their own cell at once, in another cell of
 * the space through that cell (in memory: three cells in a row, two
 * "cellapps", one route).
 */
import assert from "node:assert/strict";
import { createRegistry, defineEntity, T } from "../../core/def/mod.ts";
import { CellScript, type SpaceInfo } from "../../core/script.ts";
import type { BspNode } from "../../core/geo/mod.ts";
import type { Cell } from "../../cell/cell.ts";
import { cellsOf, type ManyCells } from "../../testing/two_cells.ts";

const Probe = defineEntity({
  name: "Probe",
  hasCell: true,
  properties: { tag: { type: T.INT32, flags: "CELL_PRIVATE" } },
});
const Base = defineEntity({ name: "Base", hasBase: true, hasCell: false, properties: {} });
const registry = createRegistry({ entities: [Probe, Base] });

/** What the last Probe created saw of its space. */
const seen: { space?: SpaceInfo } = {};

class ProbeScript extends CellScript<{ tag: number }> {
  override onCreated() {
    seen.space = this.self.space;
  }
}

/** Cells 1, 2, 3 side by side along x (0..100, 100..200, 200..300; z 0..100); 1 and 3 on "cellapp" 1, 2 on 2. */
const TREE: BspNode = {
  axis: "x",
  at: 100,
  left: { cell: { id: 1, cellapp: 1 } },
  right: { axis: "x", at: 200, left: { cell: { id: 2, cellapp: 2 } }, right: { cell: { id: 3, cellapp: 1 } } },
};

function threeCells(): ManyCells {
  return cellsOf({ registry, scripts: { Probe: ProbeScript } }, [0, 0, 300, 100], TREE);
}

const realsOf = (c: Cell) => [...c.entities.values()].filter((e) => e.isReal);

Deno.test("a script sees its space's bounds, its cell's rect and the cells touching it", () => {
  const h = threeCells();
  h.cell(1).createEntity("Probe", { x: 50, y: 0, z: 50 });
  const s = seen.space!;
  assert.equal(s.id, 9);
  assert.equal(s.isDefault, false);
  assert.deepEqual({ ...s.bounds }, { minX: 0, minZ: 0, maxX: 300, maxZ: 100 });
  assert.deepEqual({ id: s.cell.id, cellapp: s.cell.cellapp, rect: { ...s.cell.rect } }, {
    id: 1,
    cellapp: 1,
    rect: { minX: 0, minZ: 0, maxX: 100, maxZ: 100 },
  });
  assert.deepEqual(s.cells.map((c) => [c.id, c.cellapp, c.rect.minX, c.rect.maxX]), [
    [1, 1, 0, 100],
    [2, 2, 100, 200],
    [3, 1, 200, 300],
  ]);
  assert.deepEqual(s.neighbours.map((c) => c.id), [2], "cell 3 does not touch cell 1");
  assert.equal(s.cellAt(250, 10).id, 3);
  // Read-only: a script cannot move its cell's border.
  assert.throws(() => ((s.cell.rect as { maxX: number }).maxX = 5), TypeError);

  h.cell(2).createEntity("Probe", { x: 150, y: 0, z: 50 });
  assert.deepEqual(seen.space!.neighbours.map((c) => c.id), [1, 3]);
});

Deno.test("the view follows the tree: after the border moves, the script sees its cell's new rect", () => {
  const h = threeCells();
  const e = h.cell(1).createEntity("Probe", { x: 50, y: 0, z: 50 });
  assert.equal(e.space.cell.rect.maxX, 100);
  h.setTree({ ...TREE, at: 120 } as BspNode);
  assert.equal(e.space.cell.rect.maxX, 120);
  assert.equal(e.space.cells[1].rect.minX, 120);
});

Deno.test("createEntity at a point of its own cell makes the entity at once", () => {
  const h = threeCells();
  const maker = h.cell(1).createEntity("Probe", { x: 50, y: 0, z: 50 });
  const id = maker.createEntity("Probe", { x: 60, y: 1, z: 70 }, { tag: 5 });
  const made = h.cell(1).entities.get(id)!;
  assert.ok(made?.isReal);
  assert.deepEqual(made.position, { x: 60, y: 1, z: 70 });
  assert.equal(made.props.tag, 5);
});

Deno.test("createEntity at a point of another cell makes it there, with its id and properties, and not here", async () => {
  const h = threeCells();
  const maker = h.cell(1).createEntity("Probe", { x: 50, y: 0, z: 50 });
  // Cell 2 is on the other "cellapp"; cell 3 on this one (the same route, as the loopback on a cellapp).
  const far = maker.createEntity("Probe", { x: 150, y: 2, z: 30 }, { tag: 7 });
  const farther = maker.createEntity("Probe", { x: 290, y: 0, z: 90 }, { tag: 8 });
  assert.ok(!h.cell(1).entities.has(far) && !h.cell(1).entities.has(farther), "not made here");
  await h.flush();
  const inTwo = h.cell(2).entities.get(far);
  assert.ok(inTwo?.isReal, `entity ${far} is real in cell 2`);
  assert.deepEqual(inTwo.position, { x: 150, y: 2, z: 30 });
  assert.equal(inTwo.props.tag, 7);
  assert.equal(h.cell(3).entities.get(farther)?.props.tag, 8);
  assert.deepEqual(realsOf(h.cell(1)).map((e) => e.id), [maker.id]);
  // Its script ran where it was made, and saw that cell.
  assert.equal(seen.space!.cell.id, 3);
});

Deno.test("createEntity refuses at once what the other cell would refuse, naming it", () => {
  const h = threeCells();
  const maker = h.cell(1).createEntity("Probe", { x: 50, y: 0, z: 50 });
  const far = { x: 150, y: 0, z: 50 };
  assert.throws(() => maker.createEntity("Goblin", far), /unknown entity type "Goblin"/);
  assert.throws(() => maker.createEntity("Base", far), /Base has no cell part/);
  assert.throws(() => maker.createEntity("Probe", far, { tag: "x" }), /tag/);
  assert.throws(() => maker.createEntity("Probe", { x: 2e9, y: 0, z: 0 }), /not within/);
  // This harness has no cellappmgr to find another space's cells.
  assert.throws(() => maker.createEntity("Probe", far, {}, 77), /cannot reach space 77/);
  assert.throws(() => maker.createEntity("Probe", far, {}, -1), /-1 is not a space id/);
});
