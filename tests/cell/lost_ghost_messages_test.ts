/**
 * Messages between cellapps are lost when a channel is closed as dead (a cellapp stalled past
 * deadAfterMs): a ghost whose delete was lost must not stand still in observers' views for good. Reals announce
 * themselves to their ghosts at every check; a ghost that hears nothing asks its real, which deletes a ghost it no
 * longer keeps (and makes again one it keeps). An offload whose answer was lost is asked again rather than given
 * up, which would leave the entity real in both cells. In memory (two cells, one route), messages dropped as a
 * closed channel would.
 */
import assert from "node:assert/strict";
import { createRegistry, defineEntity, T } from "../../core/def/mod.ts";
import { configureSpaceAoI, Witness, witnessOf } from "../../cell/witness/witness.ts";
import { ClientWorld } from "../../client/world.ts";
import { twoCellsOf } from "../../testing/two_cells.ts";

const Walker = defineEntity({
  name: "Walker",
  hasCell: true,
  hasClient: true,
  volatile: { position: true },
  properties: { step: { type: T.UINT32, flags: "ALL_CLIENTS" } },
});
const registry = createRegistry({ entities: [Walker] });

/** Cells a (x < 100) and b, ghosts 20 m deep, AoI 30 m; an observer in b at x = 110 with a client. */
function setup(lost: (name: string, args: unknown[]) => boolean) {
  const h = twoCellsOf({ registry, drop: lost, cfg: { checkMs: 100, minLifetimeMs: 300, resyncAfterMs: 500 } });
  for (const c of [h.a, h.b]) configureSpaceAoI(c, { aoiRadius: 30, hysteresis: 5 });
  const observer = h.b.createEntity("Walker", { x: 110, y: 0, z: 50 });
  const world = new ClientWorld(registry, { send: (b) => witnessOf(observer)?.receive(b) });
  world.setPlayer(observer.id, observer.type);
  new Witness(observer, {}, (frame) => world.receive(frame));
  return { h, observer, world };
}

Deno.test("a ghost whose delete was lost goes, and leaves its observers' views", async () => {
  let cut = false;
  const { h, world } = setup((name) => cut && ["ghostSync", "ghostSeq", "deleteGhost"].includes(name));
  const real = h.a.createEntity("Walker", { x: 95, y: 0, z: 50 });
  await h.tick(10);
  assert.ok(h.b.ghosts.has(real.id) && world.entities.has(real.id), "b holds its ghost, the client sees it");
  // The channel from a to b is closed as dead: the walker's move away and its ghost's delete are lost with it.
  cut = true;
  h.a.moveEntity(real, 10, 0, 50);
  await h.tick(8);
  cut = false;
  assert.ok(!real.ghosting?.links.has(h.b.cellId), "a no longer keeps a ghost in b");
  assert.equal(h.b.ghosts.get(real.id)?.x, 95, "b's ghost was left behind where the client sees it");
  for (let t = 0; t < 50 && h.b.ghosts.has(real.id); t++) await h.tick();
  assert.ok(!h.b.ghosts.has(real.id), "the ghost left behind went");
  await h.tick(3);
  assert.ok(!world.entities.has(real.id), "the client was told it left");
});

Deno.test("a ghost that lost its real's batches and announcements is made again, in step", async () => {
  let cut = false;
  const { h, world } = setup((name) => cut && ["ghostSync", "ghostSeq"].includes(name));
  const real = h.a.createEntity("Walker", { x: 95, y: 0, z: 50 });
  await h.tick(10);
  cut = true;
  (real.props as { step: number }).step = 7;
  h.a.moveEntity(real, 97, 0, 50);
  await h.tick(3);
  cut = false;
  for (let t = 0; t < 50 && h.b.ghosts.get(real.id)?.x !== 97; t++) await h.tick();
  assert.equal(h.b.ghosts.get(real.id)?.x, 97, "b's ghost is in step again");
  await h.tick(3);
  assert.equal(world.entities.get(real.id)?.props.step, 7, "the client has its step");
});

Deno.test("an idle real's ghost hears from it at every check: no resync, no new state", async () => {
  const { h } = setup(() => false);
  const real = h.a.createEntity("Walker", { x: 95, y: 0, z: 50 });
  await h.tick(10);
  const ghost = h.b.ghosts.get(real.id);
  assert.ok(ghost);
  await h.tick(60); // 6 s of nothing changing, well past the silence a ghost asks after
  assert.equal(h.b.ghosts.get(real.id), ghost, "the same ghost");
  assert.equal(h.b.ghostResyncs, 0, "it never asked for a resync");
});

Deno.test("an offload whose answer was lost with its channel is asked again: the entity ends real once", async () => {
  let lose = 1;
  const h = twoCellsOf({
    registry,
    loseAnswer: (name) => name === "offload" && lose-- > 0,
    cfg: { checkMs: 100, minLifetimeMs: 300 },
  });
  const e = h.a.createEntity("Walker", { x: 95, y: 0, z: 50 });
  await h.tick(5);
  h.a.moveEntity(e, 115, 0, 50); // past the hysteresis: it goes to b
  for (let t = 0; t < 20 && (h.a.entities.has(e.id) || !h.b.entities.has(e.id)); t++) await h.tick();
  assert.ok(h.b.entities.has(e.id), "b holds the real");
  assert.ok(!h.a.entities.has(e.id) && h.a.ghosts.has(e.id), "a holds its ghost, not a second real");
  assert.ok(lose < 0, "the first answer was lost");
  assert.ok(h.log.lines.some((l) => /answer to its offload to cell 2 .* was lost .*asking again/.test(l)));
  // And it goes on from b: a move there reaches a's ghost.
  h.b.moveEntity(h.b.entities.get(e.id)!, 116, 0, 50);
  await h.tick(2);
  assert.equal(h.a.ghosts.get(e.id)?.x, 116);
});
