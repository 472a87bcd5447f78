/**
 * Several cells of one space on one cellapp: 4 cells over 2 "cellapps" (bounds 0..200 × 0..200, split at x = 100,
 * then z = 100 on each side), placed round-robin as the cellappmgr places them, so cells 1 and 3 (cellapp 1) are
 * neighbours along x = 100 for z < 100, and so are cells 2 and 4 (cellapp 2) for z >= 100.
 */
import assert from "node:assert/strict";
import { createRegistry, defineEntity, T } from "../../core/def/mod.ts";
import { buildBsp, cellRects } from "../../core/geo/mod.ts";
import { CellScript } from "../../core/script.ts";
import type { Cell } from "../../cell/cell.ts";
import { cellsOf } from "../../testing/two_cells.ts";
import type { ChaosOptions } from "../../testing/route.ts";

const Walker = defineEntity({
  name: "Walker",
  hasCell: true,
  volatile: { position: true, yaw: true },
  properties: {
    hp: { type: T.INT32, flags: "OTHER_CLIENTS", default: 100 },
    ticks: { type: T.INT32, flags: "CELL_PUBLIC" },
  },
  cellMethods: { hit: { args: [{ name: "amount", type: T.INT32 }] } },
});
const registry = createRegistry({ entities: [Walker] });

/** Counts its timer's firings, so a copy that skips or repeats one shows. */
class Counting extends CellScript {
  override onCreated(): void {
    this.self.addTimer(0.1, 0.1);
  }
  override onTimer(): void {
    (this.self.props as { ticks: number }).ticks++;
  }
  hit(_caller: number, amount: number): number {
    const p = this.self.props as { hp: number };
    p.hp -= amount;
    return p.hp;
  }
}

/** The 4-cell space, its messages in order or through chaos (testing/route.ts). */
function fourCells(chaos?: ChaosOptions): ReturnType<typeof cellsOf> {
  const bounds: [number, number, number, number] = [0, 0, 200, 200];
  const tree = buildBsp({ minX: 0, minZ: 0, maxX: 200, maxZ: 200 }, [1, 2, 1, 2]);
  return cellsOf({ registry, scripts: { Walker: Counting }, chaos }, bounds, tree);
}

/** Where each entity is real (a copy whose hand-over is in flight aside), and how many copies are real. */
function reals(cells: readonly Cell[]): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (const c of cells) {
    for (const [id, e] of c.entities) if (!e.offloading) out.set(id, [...(out.get(id) ?? []), c.cellId]);
  }
  return out;
}

Deno.test("the round-robin tree: 4 cells with ids 1..4, two per cellapp, same-cellapp neighbours", () => {
  const tree = buildBsp({ minX: 0, minZ: 0, maxX: 200, maxZ: 200 }, [1, 2, 1, 2]);
  const cells = cellRects(tree, { minX: 0, minZ: 0, maxX: 200, maxZ: 200 });
  assert.deepEqual(cells.map((c) => [c.id, c.cellapp, c.rect.minX, c.rect.minZ]), [
    [1, 1, 0, 0],
    [2, 2, 0, 100],
    [3, 1, 100, 0],
    [4, 2, 100, 100],
  ]);
});

Deno.test("a ghost in a neighbour cell of the same cellapp follows its real, keyed by cell", async () => {
  const h = fourCells();
  const [c1, c2, c3, c4] = [1, 2, 3, 4].map((id) => h.cell(id));
  const e = c1.createEntity("Walker", { x: 90, y: 0, z: 50 });
  const corner = c1.createEntity("Walker", { x: 90, y: 0, z: 90 });
  await h.tick(2);
  assert.ok(c3.ghosts.has(e.id), "ghosted into cell 3, on the same cellapp");
  assert.ok(!c2.ghosts.has(e.id) && !c4.ghosts.has(e.id), "not into cells it is far from");
  assert.deepEqual([...e.ghosting!.links.keys()], [3]);
  assert.deepEqual([...corner.ghosting!.links.keys()].sort(), [2, 3, 4], "one ghost per neighbour cell");
  assert.ok(h.delivered.some(([name, from, to]) => name === "ghostSync" && from === "a" && to === "a"));
  e.props.hp = 42;
  c1.moveEntity(e, 95, 0, 55);
  await h.tick(1);
  const g = c3.ghosts.get(e.id)!;
  assert.deepEqual([g.props.hp, g.x, g.z], [42, 95, 55]);
  assert.equal(g.ghostInfo!.realCell, 1);
  // A call made where the entity is a ghost runs on its real, in the other cell of the same cellapp.
  const caller = c3.createEntity("Walker", { x: 150, y: 0, z: 50 });
  const answer = c3.callEntity(caller, e.id, "hit", [2]);
  await h.flush();
  assert.equal(await answer, 40);
  assert.equal(e.props.hp, 40);
  // Going away: the ghost in the same cellapp's neighbour goes too.
  c1.moveEntity(e, 20, 0, 50);
  await h.tick(10);
  assert.ok(!c3.ghosts.has(e.id));
  assert.equal(e.ghosting!.links.size, 0);
});

const OFFLOADS = "offloads between two cells of one cellapp, and to the other cellapp: none lost or doubled";
async function offloads(chaos?: ChaosOptions): Promise<void> {
  const h = fourCells(chaos);
  const [c1, c2, c3] = [1, 2, 3].map((id) => h.cell(id));
  const walkers = [0, 1, 2, 3, 4].map((i) => c1.createEntity("Walker", { x: 80, y: 0, z: 10 + i * 10 }));
  const [first] = walkers;
  for (const w of walkers) w.moveToPoint({ x: 140, y: 0, z: w.z }, 10);
  for (let i = 0; i < 10 && !walkers.every((w) => c3.ghosts.has(w.id)); i++) await h.tick(1);
  assert.ok(walkers.every((w) => c3.ghosts.has(w.id)), "their ghosts wait in cell 3 before they cross");
  assert.ok(walkers.every((w) => w.x < 100), "before they cross");
  const ticksBefore = first.props.ticks as number;
  for (let i = 0; i < 60 && c1.entities.size > 0; i++) {
    await h.tick(1);
    for (const [id, where] of reals(h.cells)) assert.equal(where.length, 1, `entity ${id} real in ${where}`);
  }
  assert.equal(c1.entities.size, 0, "all moved out of cell 1");
  assert.ok(walkers.every((w) => c3.entities.has(w.id)), "into cell 3, on the same cellapp");
  // Through chaos a ghost may be gone already: its real walked on out of the area while answers travelled.
  const left = walkers.filter((w) => c1.ghosts.has(w.id) || !chaos);
  assert.ok(left.every((w) => c1.ghosts.get(w.id)?.ghostInfo?.realCell === 3), "leaving ghosts behind");
  assert.equal(c3.offloadsIn, 5);
  assert.equal(c1.offloadsOut, 5);
  const moved = c3.entities.get(first.id)!;
  assert.ok((moved.props.ticks as number) > ticksBefore, "its timer kept firing on the new real");
  // Back west through cell 1 and north into cell 2, on the other cellapp.
  moved.moveToPoint({ x: 60, y: 0, z: 150 }, 20);
  for (let i = 0; i < 150 && !c2.entities.has(first.id); i++) await h.tick(1);
  assert.ok(c2.entities.has(first.id), "it reached cell 2, on cellapp 2");
  await h.tick(20);
  await h.flush();
  const all = reals(h.cells);
  assert.equal(all.size, 5);
  for (const [id, where] of all) assert.equal(where.length, 1, `entity ${id} real in cells ${where}`);
  for (const c of h.cells) {
    for (const [id, g] of c.ghosts) {
      assert.ok(!c.entities.has(id), "never real and ghost in one cell");
      assert.equal(g.ghostInfo!.realCell, all.get(id)![0], `ghost ${id} in cell ${c.cellId} knows its real's cell`);
    }
  }
}
for (const chaos of [undefined, { seed: 1 }, { seed: 2 }, { seed: 3 }]) {
  const how = chaos ? ` (messages delayed, reordered, duplicated: seed ${chaos.seed})` : "";
  Deno.test(OFFLOADS + how, () => offloads(chaos));
}
