/**
 * Teleports within a space (in memory: two cells, one route): to a point of
 * another cell where no ghost waits, the real is created there directly and
 * its client's view is rebuilt.
 */
import assert from "node:assert/strict";
import { createRegistry, defineEntity, T } from "../../core/def/mod.ts";
import { CellScript } from "../../core/script.ts";
import { configureSpaceAoI, Witness, witnessOf } from "../../cell/witness.ts";
import { ClientWorld } from "../../client/world.ts";
import { twoCellsOf } from "../helpers/two_cells.ts";

const Jumper = defineEntity({
  name: "Jumper",
  hasCell: true,
  hasClient: true,
  volatile: { position: true, yaw: true },
  properties: {
    hp: { type: T.INT32, flags: "ALL_CLIENTS", default: 100 },
    ticks: { type: T.INT32, flags: "CELL_PRIVATE" },
  },
});
const registry = createRegistry({ entities: [Jumper] });

class Ticking extends CellScript {
  override onCreated() {
    this.self.addTimer(0.1, 0.1);
  }
  override onTimer() {
    (this.self.props as { ticks: number }).ticks++;
  }
}

Deno.test("a teleport across the space: the real is made where it lands, its timers go on, its view is rebuilt", async () => {
  const ref: { world?: ClientWorld } = {};
  const sink = (frame: Uint8Array) => ref.world!.receive(frame);
  let playerId = 0;
  const h = twoCellsOf({
    registry,
    scripts: { Jumper: Ticking },
    cfg: { ghostRadius: 45 },
    clientSink: (e) => (e.id === playerId ? sink : undefined),
  });
  for (const c of [h.a, h.b]) configureSpaceAoI(c, { aoiRadius: 30, hysteresis: 5 });
  const p = h.a.createEntity("Jumper", { x: 20, y: 0, z: 50 });
  const nearA = h.a.createEntity("Jumper", { x: 25, y: 0, z: 50 });
  const nearB = h.b.createEntity("Jumper", { x: 180, y: 0, z: 50 });
  playerId = p.id;
  const real = () => (h.a.entities.get(p.id) ?? h.b.entities.get(p.id))!;
  const world = ref.world = new ClientWorld(registry, { send: (b) => witnessOf(real())?.receive(b) });
  world.setPlayer(p.id, p.type);
  new Witness(p, {}, sink);
  await h.tick(3);
  assert.deepEqual([...world.entities.keys()], [nearA.id]);
  assert.ok(!h.b.ghosts.has(p.id), "no ghost of it waits where it goes");
  const ticksBefore = p.props.ticks as number;
  const leaves: number[] = [];
  world.on("leave", (ev) => leaves.push(ev.entity.id));
  const done = p.teleport({ x: 175, y: 0, z: 50 });
  await h.tick(1);
  await done;
  const there = h.b.entities.get(p.id)!;
  assert.ok(there && there.isReal && !h.a.entities.has(p.id), "real in the destination cell only");
  assert.deepEqual([there.x, there.z], [175, 50]);
  assert.deepEqual(leaves, [nearA.id], "the old view got its leaves");
  await h.tick(3);
  assert.deepEqual([...world.entities.keys()], [nearB.id], "the new view was built where it landed");
  assert.ok((there.props.ticks as number) >= ticksBefore + 3, "its timer kept going there");
  assert.equal(h.a.entities.size + h.b.entities.size, 3, "none lost, none doubled");
  // Within its own cell a teleport is a move.
  await there.teleport({ x: 150, y: 0, z: 10 });
  assert.deepEqual([there.x, there.z], [150, 10]);
  await assert.rejects(there.teleport({ x: NaN, y: 0, z: 0 }), /not within/);
});
