/**
 * moveToEntity across a cell border (in memory: two cells split at x = 100, ghosts 45 m deep): the mover follows a
 * target that is a ghost in its cell, and keeps following as either of them moves cell; it ends only when the
 * target is gone from its cell's view.
 */
import assert from "node:assert/strict";
import { createRegistry, defineEntity, T } from "../../core/def/mod.ts";
import { CellScript } from "../../core/script.ts";
import type { Entity } from "../../cell/entity.ts";
import { twoCellsOf } from "../../testing/two_cells.ts";

const Walker = defineEntity({
  name: "Walker",
  hasCell: true,
  volatile: { position: true, yaw: true },
  properties: { hp: { type: T.INT32, flags: "OTHER_CLIENTS", default: 100 } },
});
const registry = createRegistry({ entities: [Walker] });

/** Entity ids whose movement arrived (onMove). */
const arrived: number[] = [];

class Mover extends CellScript {
  override onMove(): void {
    arrived.push(this.self.id);
  }
}

function setup() {
  arrived.length = 0;
  const h = twoCellsOf({ registry, scripts: { Walker: Mover }, cfg: { ghostRadius: 45 } });
  const real = (id: number): Entity => (h.a.entities.get(id) ?? h.b.entities.get(id))!;
  return { ...h, real };
}

const dist = (p: Entity, q: Entity) => Math.hypot(p.x - q.x, p.z - q.z);

Deno.test("moveToEntity follows a target that is a ghost in its cell, over the border, to arrival", async () => {
  const { a, b, tick, real } = setup();
  const mover = a.createEntity("Walker", { x: 60, y: 0, z: 50 });
  const target = b.createEntity("Walker", { x: 125, y: 0, z: 50 });
  await tick(2);
  assert.ok(a.ghosts.has(target.id), "the target is a ghost in the mover's cell");
  mover.moveToEntity(target.id, 20, 2);
  await tick(1);
  assert.ok(mover.movement !== null && mover.x > 60, "it set off towards the ghost");
  for (let i = 0; i < 40 && arrived.length === 0; i++) await tick(1);
  assert.deepEqual(arrived, [mover.id], "it arrived");
  const m = real(mover.id);
  assert.ok(b.entities.has(mover.id), "having moved into the target's cell on the way");
  assert.ok(Math.abs(dist(m, target) - 2) < 1e-6, `within range: ${dist(m, target)}`);
});

Deno.test("moveToEntity keeps following when its target moves into the next cell, and the mover after it", async () => {
  const { a, b, tick, real } = setup();
  const mover = a.createEntity("Walker", { x: 20, y: 0, z: 50 });
  const target = a.createEntity("Walker", { x: 60, y: 0, z: 50 });
  // It stops within the mover's cell's ghost area (x < 145): further away, the mover's cell would lose sight of it.
  target.moveToPoint({ x: 140, y: 0, z: 50 }, 8);
  mover.moveToEntity(target.id, 6, 3);
  let targetLeft = false;
  for (let i = 0; i < 400 && !arrived.includes(mover.id); i++) {
    await tick(1);
    if (b.entities.has(target.id) && !targetLeft) {
      targetLeft = true;
      assert.ok(a.entities.has(mover.id) && real(mover.id).movement, "the mover still follows the target's ghost");
    }
  }
  assert.ok(targetLeft, "the target moved cell while followed");
  assert.ok(arrived.includes(mover.id), "the mover arrived");
  const m = real(mover.id);
  assert.ok(b.entities.has(mover.id), "in the target's new cell");
  assert.ok(Math.abs(dist(m, real(target.id)) - 3) < 1e-6, `within range of it: ${dist(m, real(target.id))}`);
});

Deno.test("moveToEntity ends without arriving when the followed ghost's real is destroyed", async () => {
  const { a, b, tick } = setup();
  const mover = a.createEntity("Walker", { x: 20, y: 0, z: 50 });
  const target = b.createEntity("Walker", { x: 130, y: 0, z: 50 });
  await tick(2);
  mover.moveToEntity(target.id, 5, 1);
  await tick(3);
  assert.ok(mover.movement, "following");
  b.destroyEntity(target);
  await tick(2);
  assert.equal(mover.movement, null, "the movement ended");
  const x = mover.x;
  await tick(3);
  assert.equal(mover.x, x, "and the mover stopped");
  assert.deepEqual(arrived, [], "without arriving");
});
