/**
 * The navigate controller in cells of this process: a walker goes around the wall of the test OBJ to its target, in one
 * cell and across a cell border (handed over with its path); a backup taken mid-walk goes on where it is restored; an
 * unreachable target fails the controller with the reason.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { createRegistry, defineEntity } from "../../core/def/mod.ts";
import { CellScript, type Vec3 } from "../../core/script.ts";
import { NavMeshes } from "../../cell/nav/mod.ts";
import type { Cell } from "../../cell/cell.ts";
import type { Entity } from "../../cell/entity.ts";
import { restoreFromBackup } from "../../cell/backup/mod.ts";
import { loneCell } from "../../testing/lone_cell.ts";
import { twoCellsOf } from "../../testing/two_cells.ts";

const WALL_OBJ = fileURLToPath(new URL("../fixtures/nav/wall.obj", import.meta.url));
/** The wall's footprint in the fixture: x 78..82, z 0..70. */
const inWall = (p: Vec3) => p.x > 78 && p.x < 82 && p.z > 0 && p.z < 70;

const Walker = defineEntity({ name: "Walker", hasCell: true, properties: {} });
const registry = createRegistry({ entities: [Walker] });

/** What walkers heard: [entity id, callback, controller id, reason]. */
const heard: [number, string, number, string?][] = [];

class Walking extends CellScript {
  override onMove(id: number): void {
    heard.push([this.self.id, "onMove", id]);
  }
  override onMoveFailed(id: number, reason: string): void {
    heard.push([this.self.id, "onMoveFailed", id, reason]);
  }
}
const scripts = { Walker: Walking };

const meshes = new NavMeshes();
await meshes.load(WALL_OBJ);

function navCell(): Cell {
  return loneCell({ registry, scripts, bounds: [0, 0, 200, 100], spaceId: 3, navGeometry: WALL_OBJ, navMeshes: meshes })
    .cell;
}

/** Ticks `cell` until `done`, at most `max` ticks of 100 ms, checking each tick that `e` is not in the wall. */
function tickUntil(cell: Cell, e: () => Entity | undefined, done: () => boolean, max = 200): number {
  for (let i = 0; i < max; i++) {
    if (done()) return i;
    cell.tick(100);
    const w = e();
    if (w) assert.ok(!inWall(w), `tick ${i}: entity ${w.id} at (${w.x}, ${w.z}) is inside the wall`);
  }
  throw new Error(`not done within ${max} ticks`);
}

Deno.test("a walker navigates around the wall to its target and hears onMove", () => {
  heard.length = 0;
  const cell = navCell();
  const e = cell.createEntity("Walker", { x: 60, y: 0, z: 30 });
  assert.ok(e.canNavigateTo({ x: 140, y: 0, z: 30 }));
  const id = e.navigate({ x: 140, y: 0, z: 30 }, 20);
  let maxZ = 0;
  tickUntil(cell, () => e, () => {
    maxZ = Math.max(maxZ, e.z);
    return heard.length > 0;
  });
  assert.deepEqual(heard, [[e.id, "onMove", id]]);
  assert.ok(Math.hypot(e.x - 140, e.z - 30) < 0.1, `at the target: (${e.x}, ${e.z})`);
  assert.ok(maxZ > 70, `it went round the wall's end (furthest z ${maxZ})`);
  assert.equal(e.movement, null);
});

Deno.test("a navigate to an unreachable point fails the controller with the reason, at the next tick", () => {
  heard.length = 0;
  const cell = navCell();
  const e = cell.createEntity("Walker", { x: 60, y: 0, z: 30 });
  assert.equal(e.canNavigateTo({ x: 155, y: 3, z: 85 }), false);
  assert.equal(e.findPath(e.position, { x: 155, y: 3, z: 85 }), null);
  const id = e.navigate({ x: 155, y: 3, z: 85 }, 20, { userArg: 7 });
  assert.equal(heard.length, 0, "not from inside navigate: the script has its id first");
  cell.tick(100);
  assert.equal(heard.length, 1);
  const [who, what, ctl, reason] = heard[0];
  assert.deepEqual([who, what, ctl], [e.id, "onMoveFailed", id]);
  assert.match(reason!, new RegExp(`^navigate by Walker ${e.id}: no path to \\(155, 3, 85\\): it is not connected`));
  assert.deepEqual([e.x, e.z], [60, 30], "it did not move");
  assert.equal(e.movement, null);
});

Deno.test("a space without navigation geometry refuses navigate and the queries, naming the space", () => {
  const cell = loneCell({ registry, scripts, spaceId: 4 }).cell;
  const e = cell.createEntity("Walker", { x: 0, y: 0, z: 0 });
  assert.throws(
    () => e.navigate({ x: 5, y: 0, z: 5 }, 1),
    /navigate by Walker \d+: space 4 has no navigation geometry/,
  );
  assert.throws(() => e.findPath(e.position, { x: 5, y: 0, z: 5 }), /findPath by Walker \d+: space 4 has no/);
  assert.throws(() => e.raycast(e.position, { x: 5, y: 0, z: 5 }), /raycast by Walker \d+: space 4 has no/);
});

Deno.test("a walk crosses the cell border: handed over with its path, it goes on around the wall to the target", async () => {
  heard.length = 0;
  // Cells 1 (x < 100) and 2 (x > 100) on two "cellapps"; the wall is in cell 1, the target in cell 2.
  const h = twoCellsOf({ registry, scripts, navGeometry: WALL_OBJ, navMeshes: meshes });
  const e = h.a.createEntity("Walker", { x: 60, y: 0, z: 30 });
  const id = e.navigate({ x: 140, y: 0, z: 30 }, 20);
  const where = () => h.a.entities.get(e.id) ?? h.b.entities.get(e.id);
  for (let i = 0; i < 200 && heard.length === 0; i++) {
    await h.tick(1);
    const w = where();
    assert.ok(w, `tick ${i}: real in one of the cells`);
    assert.ok(!inWall(w), `tick ${i}: (${w.x}, ${w.z}) is inside the wall`);
  }
  const real = h.b.entities.get(e.id);
  assert.ok(real, "real in cell 2");
  assert.ok(!h.a.entities.has(e.id), "no longer real in cell 1");
  assert.deepEqual(heard, [[e.id, "onMove", id]], "onMove once, in cell 2");
  assert.ok(Math.hypot(real.x - 140, real.z - 30) < 0.1, `at the target: (${real.x}, ${real.z})`);
});

Deno.test("a backup taken mid-walk is restored walking: it goes on to the target, without a mesh where it lands", () => {
  heard.length = 0;
  const cell = navCell();
  const e = cell.createEntity("Walker", { x: 60, y: 0, z: 30 });
  const id = e.navigate({ x: 140, y: 0, z: 30 }, 20, { userArg: 3 });
  for (let i = 0; i < 12; i++) cell.tick(100);
  assert.ok(e.z > 30 && e.x < 78, `on its way to the wall's end: (${e.x}, ${e.z})`);
  const backup = structuredClone({ spaceId: 3, epoch: 0, entity: e.serialise(cell.time) });
  // A cell whose cellapp has no mesh of the space: the walk carries its path.
  const other = loneCell({ registry, scripts, bounds: [0, 0, 200, 100], spaceId: 3, navGeometry: WALL_OBJ }).cell;
  assert.equal(restoreFromBackup(other, backup, null, false), true);
  const r = other.entities.get(e.id)!;
  assert.equal(r.movement?.kind, "navigate");
  tickUntil(other, () => r, () => heard.length > 0);
  assert.deepEqual(heard, [[e.id, "onMove", id]]);
  assert.ok(Math.hypot(r.x - 140, r.z - 30) < 0.1, `at the target: (${r.x}, ${r.z})`);
});

Deno.test("a teleport ends a navigation: its path was of where the walker was, and the reason says so", async () => {
  heard.length = 0;
  const cell = navCell();
  const e = cell.createEntity("Walker", { x: 60, y: 0, z: 30 });
  const id = e.navigate({ x: 140, y: 0, z: 30 }, 20);
  cell.tick(100);
  await e.teleport({ x: 120, y: 0, z: 80 });
  cell.tick(100);
  assert.deepEqual(heard.map(([who, what, ctl]) => [who, what, ctl]), [[e.id, "onMoveFailed", id]]);
  assert.match(heard[0][3]!, /it was teleported to \(120, 0, 80\)/);
  assert.deepEqual([e.x, e.z], [120, 80], "it stays where it landed");
});
