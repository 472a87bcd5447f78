/**
 * Cells following the balancer's partition moves (docs/architecture.md, "Balancing"): reals a move leaves outside their
 * cell hand over at most maxOffloadsPerTick a tick and end real exactly once, in the right cell; a cell that left the
 * tree hands all its reals over and removes itself; cells of zero width (growing from, or shrinking to, nothing) hold
 * nothing. In-process cells (testing/two_cells.ts), messages delivered in order.
 */
import assert from "node:assert/strict";
import { createRegistry, defineEntity, T } from "../../core/def/mod.ts";
import { type BspNode, cellIndexAt, cellRects, removeCell } from "../../core/geo/mod.ts";
import { CellScript } from "../../core/script.ts";
import type { Cell } from "../../cell/cell.ts";
import { GHOST_DEFAULTS } from "../../cell/borders/ghosts.ts";
import { rectDistanceOutside } from "../../core/geo/mod.ts";
import { cellsOf, type ManyCells } from "../../testing/two_cells.ts";

const Npc = defineEntity({
  name: "Npc",
  hasCell: true,
  volatile: { position: true },
  properties: { ticks: { type: T.INT32, flags: "CELL_PUBLIC" } },
});
const registry = createRegistry({ entities: [Npc] });

/** Counts its timer's firings: a copy that skips or repeats shows. */
class Counting extends CellScript {
  override onCreated(): void {
    this.self.addTimer(0.1, 0.1);
  }
  override onTimer(): void {
    (this.self.props as { ticks: number }).ticks++;
  }
}

const BOUNDS: [number, number, number, number] = [0, 0, 400, 100];
const HYSTERESIS = GHOST_DEFAULTS.offloadHysteresis;

function split(at: number, left: BspNode, right: BspNode): BspNode {
  return { axis: "x", at, left, right };
}

function leaf(id: number, cellapp = id): BspNode {
  return { cell: { id, cellapp } };
}

/** Every entity's real copies (hand-overs in flight aside) by cell id. */
function realsOf(cells: readonly Cell[]): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (const c of cells) {
    for (const [id, e] of c.entities) if (!e.offloading) out.set(id, [...(out.get(id) ?? []), c.cellId]);
  }
  return out;
}

/**
 * Asserts each of `ids` is real exactly once, in the cell the tree puts it in or within the hysteresis of its own
 * (a cell with no area holds none), and that every ghost has a real.
 */
function assertPlaced(h: ManyCells, tree: BspNode, ids: readonly number[]): void {
  const reals = realsOf(h.cells);
  const layout = cellRects(tree, { minX: BOUNDS[0], minZ: BOUNDS[1], maxX: BOUNDS[2], maxZ: BOUNDS[3] });
  for (const id of ids) {
    const where = reals.get(id);
    assert.equal(where?.length, 1, `entity ${id} is real in cells ${where}`);
    const e = h.cell(where![0]).entities.get(id)!;
    const mine = layout.find((c) => c.id === where![0]);
    // A real up to the hysteresis outside its cell stays there.
    if (mine && mine.rect.maxX > mine.rect.minX && rectDistanceOutside(mine.rect, e.x, e.z) <= HYSTERESIS) continue;
    assert.equal(where![0], layout[cellIndexAt(tree, e.x, e.z)].id, `entity ${id} at x = ${e.x}`);
  }
  for (const c of h.cells) {
    for (const g of c.ghosts.values()) {
      assert.ok(reals.has(g.id), `cell ${c.cellId} holds a ghost of ${g.id}, which is real nowhere`);
    }
  }
}

Deno.test("a partition moved across 200 reals hands them over at most the cap a tick; each ends real once", async () => {
  const cap = 20;
  const before = split(300, leaf(1), leaf(2));
  const h = cellsOf({ registry, scripts: { Npc: Counting }, cfg: { maxOffloadsPerTick: cap } }, BOUNDS, before);
  const ids: number[] = [];
  // 200 reals in cell 1 between x = 100 and 290, beyond the hysteresis of the partition's new place (x = 50).
  for (let i = 0; i < 200; i++) {
    ids.push(h.cell(1).createEntity("Npc", { x: 100 + (i % 20) * 9.5, y: 0, z: 2 + Math.floor(i / 20) * 9.5 }).id);
  }
  await h.tick(3);
  const after = split(50, leaf(1), leaf(2));
  h.setTree(after);
  const perTick: number[] = [];
  for (let t = 0; t < 40 && h.cell(2).entities.size < 200; t++) {
    const out = h.cell(1).offloadsOut;
    await h.tick();
    perTick.push(h.cell(1).offloadsOut - out);
  }
  assert.equal(h.cell(2).entities.size, 200, `handed over per tick: ${perTick}`);
  assert.ok(Math.max(...perTick) <= cap, `handed over per tick: ${perTick}`);
  assert.ok(perTick.filter((n) => n > 0).length >= 200 / cap, `handed over per tick: ${perTick}`);
  assert.equal(h.cell(1).entities.size, 0);
  await h.tick(2);
  assertPlaced(h, after, ids);
  // Every real's timer went on through the move: none stopped.
  const ticks = ids.map((id) => (h.cell(2).entities.get(id)!.props as { ticks: number }).ticks);
  await h.tick(3);
  ids.forEach((id, i) => assert.ok((h.cell(2).entities.get(id)!.props as { ticks: number }).ticks > ticks[i]));
});

Deno.test("a cell that left the tree hands all its reals over, then removes itself and drops its ghosts", async () => {
  const tree = split(100, leaf(1), split(200, leaf(2), leaf(3)));
  const h = cellsOf({ registry, scripts: { Npc: Counting }, cfg: { maxOffloadsPerTick: 10 } }, BOUNDS, tree);
  const ids: number[] = [];
  // Reals all over cell 2, some within the hysteresis of its old edges, and reals of its neighbours ghosted into it.
  for (let i = 0; i < 50; i++) ids.push(h.cell(2).createEntity("Npc", { x: 100 + i * 2, y: 0, z: i * 2 }).id);
  ids.push(h.cell(1).createEntity("Npc", { x: 95, y: 0, z: 50 }).id);
  ids.push(h.cell(3).createEntity("Npc", { x: 205, y: 0, z: 50 }).id);
  await h.tick(3);
  assert.equal(h.cell(2).ghosts.size, 2);
  const without2 = removeCell(tree, 2)!;
  const retired = h.cell(2);
  h.setTree(without2);
  assert.equal(retired.inTree, false);
  // The balancer sends the tree again every period: that must not keep the empty cell lingering.
  for (let t = 0; t < 60 && !h.gone.includes(2); t++) {
    h.setTree(without2);
    await h.tick();
  }
  assert.deepEqual(h.gone, [2], "cell 2 handed its reals over and went");
  assert.equal(retired.entities.size, 0);
  assert.equal(retired.ghosts.size, 0);
  assert.ok(!h.cells.includes(retired));
  assert.ok(h.log.lines.some((l) => /cell 2 left the tree and holds no real any more: removed/.test(l)));
  await h.tick(5);
  assertPlaced(h, without2, ids);
  // Where cell 2's reals went, so did the ghosts of their neighbours: cell 1's real near x = 100 is ghosted in 3.
  assert.ok(h.cell(3).ghosts.has(ids[50]));
});

Deno.test("zero-width cells: one growing from nothing takes its reals as it widens, and hands them back as it shrinks", async () => {
  // Cell 3 is new: zero width at x = 100, between cells 1 and 2.
  const zero = split(100, leaf(1), split(100, leaf(3), leaf(2)));
  const layout = cellRects(zero, { minX: 0, minZ: 0, maxX: 400, maxZ: 100 });
  assert.deepEqual(layout.map((c) => [c.id, c.rect.minX, c.rect.maxX]), [[1, 0, 100], [3, 100, 100], [2, 100, 400]]);
  // A point on the line is the cell's on its right, never the empty one's.
  assert.equal(layout[cellIndexAt(zero, 100, 50)].id, 2);
  assert.equal(layout[cellIndexAt(zero, 99.999, 50)].id, 1);
  const h = cellsOf({ registry, scripts: { Npc: Counting } }, BOUNDS, zero);
  const ids: number[] = [];
  for (let i = 0; i < 20; i++) ids.push(h.cell(2).createEntity("Npc", { x: 100 + i * 2, y: 0, z: 50 }).id);
  // One made in the empty cell itself (a spawn there lands on its line): it goes to the cell that has the point.
  ids.push(h.cell(3).createEntity("Npc", { x: 100, y: 0, z: 20 }).id);
  await h.tick(5);
  assert.equal(h.cell(3).entities.size, 0);
  assertPlaced(h, zero, ids);
  // Nothing divides by its zero width: its report is finite.
  const r = h.cell(3).report();
  assert.ok(Number.isFinite(r.load) && Number.isFinite(r.entityLoad!));
  assert.equal(h.cell(3).ghosts.size > 0, true, "the new cell holds ghosts of the reals near it, to take them over");

  // It grows to x = 150: the reals up to 10 m inside its new edge stay where they are (hysteresis).
  const grown = split(100, leaf(1), split(150, leaf(3), leaf(2)));
  h.setTree(grown);
  await h.tick(6);
  for (const id of ids) {
    const e = h.cells.find((c) => c.entities.has(id))!.entities.get(id)!;
    const expected = e.x < 140 ? 3 : 2;
    assert.ok(h.cell(expected).entities.has(id), `entity ${id} at x = ${e.x} should be real in cell ${expected}`);
  }
  assert.ok(h.cell(3).entities.size >= 19);

  // It shrinks to nothing again: every real goes, those on or next to its line too (a cell with no area holds none).
  h.setTree(zero);
  await h.tick(6);
  assert.equal(h.cell(3).entities.size, 0);
  assertPlaced(h, zero, ids);
});

Deno.test("a cell that left the tree with reals ghosted elsewhere: their ghosts do not freeze and expire meanwhile", async () => {
  const tree = split(100, leaf(1), split(200, leaf(2), leaf(3)));
  // Slow hand-overs (2 a tick) against a short restore timeout: the reals wait longer than a frozen ghost lives.
  const cfg = { maxOffloadsPerTick: 2, restoreTimeoutMs: 300 };
  const h = cellsOf({ registry, scripts: { Npc: Counting }, cfg }, BOUNDS, tree);
  const ids: number[] = [];
  for (let i = 0; i < 30; i++) ids.push(h.cell(2).createEntity("Npc", { x: 101 + (i % 2) * 97, y: 0, z: i * 3 }).id);
  await h.tick(3);
  const without2 = removeCell(tree, 2)!;
  h.setTree(without2);
  for (let t = 0; t < 100 && !h.gone.includes(2); t++) await h.tick();
  assert.deepEqual(h.gone, [2], "cell 2 handed its reals over and went");
  await h.tick(5);
  assertPlaced(h, without2, ids);
});

/** Walks to random points of x 20..380, z 5..95, one after the other. */
class Wander extends CellScript {
  override onCreated(): void {
    this.#next();
  }
  override onMove(): void {
    this.#next();
  }
  #next(): void {
    const s = this.self;
    s.moveToPoint({ x: 20 + s.random() * 360, y: 0, z: 5 + s.random() * 90 }, 15);
  }
}

for (const seed of [11, 12, 13]) {
  Deno.test(`a wandering crowd while the partitions move to and fro, through chaos (seed ${seed})`, async () => {
    const cfg = { maxOffloadsPerTick: 5, ghostRadius: 30, checkMs: 200, minLifetimeMs: 600, createTimeoutMs: 3000 };
    const at = (x1: number, x2: number) => split(x1, leaf(1), split(x2, leaf(2), leaf(3)));
    const h = cellsOf({ registry, scripts: { Npc: Wander }, cfg, chaos: { seed, maxDelay: 3 } }, BOUNDS, at(133, 266));
    const ids: number[] = [];
    for (let i = 0; i < 90; i++) {
      const c = h.cells[i % 3];
      ids.push(c.createEntity("Npc", { x: c.rect.minX + 20 + (i % 7) * 10, y: 0, z: 5 + i }).id);
    }
    // The balancer's moves: up to 50 m a period, both partitions, to and fro; cell 2 shrinks to nothing and back.
    const moves: [number, number][] = [[150, 250], [180, 230], [200, 200], [200, 200], [170, 260], [120, 300]];
    for (const [x1, x2] of moves) {
      h.setTree(at(x1, x2));
      for (let t = 0; t < 10; t++) {
        await h.tick();
        for (const [id, cells] of realsOf(h.cells)) assert.equal(cells.length, 1, `entity ${id} real in ${cells}`);
      }
    }
    // The crowd stops; what is in flight settles.
    for (const c of h.cells) for (const e of c.entities.values()) e.movement = null;
    await h.tick(40);
    await h.flush();
    assertPlaced(h, at(120, 300), ids);
    assert.equal(realsOf(h.cells).size, ids.length);
  });
}
