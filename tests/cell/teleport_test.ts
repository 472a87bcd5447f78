/**
 * Teleports within a space (in memory: two cells, one route): to a point of
 * another cell where no ghost waits, the real is created there directly and
 * its client's view is rebuilt.
 */
import assert from "node:assert/strict";
import { createRegistry, defineEntity, T } from "../../core/def/mod.ts";
import { CellScript } from "../../core/script.ts";
import { configureSpaceAoI, Witness, witnessOf } from "../../cell/witness/witness.ts";
import { ClientWorld } from "../../client/world.ts";
import { type TwoCells, twoCellsOf } from "../../testing/two_cells.ts";
import type { ChaosOptions } from "../../testing/route.ts";

/** The tests below run with messages in order, then through chaos with these seeds. */
const ROUTES: (ChaosOptions | undefined)[] = [undefined, { seed: 1 }, { seed: 2 }, { seed: 3 }];
const through = (chaos?: ChaosOptions) => chaos ? ` (messages delayed, reordered, duplicated: seed ${chaos.seed})` : "";

/** Ticks until `done` settles (through chaos a reply may wait a few rounds); at most 40 ticks. */
async function settle<T>(h: TwoCells, done: Promise<T>): Promise<T> {
  let settled = false;
  done.then(() => settled = true, () => settled = true);
  for (let i = 0; i < 40 && !settled; i++) await h.tick(1);
  return done;
}

/** Ticks until `ok()` holds; at most 40 ticks, then fails naming `what`. */
async function until(h: TwoCells, what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 40 && !ok(); i++) await h.tick(1);
  assert.ok(ok(), `${what} within 40 ticks`);
}

const Jumper = defineEntity({
  name: "Jumper",
  hasCell: true,
  hasClient: true,
  volatile: { position: true, yaw: true },
  properties: {
    hp: { type: T.INT32, flags: "ALL_CLIENTS", default: 100 },
    mood: { type: T.UINT8, flags: "OTHER_CLIENTS" },
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

for (const chaos of ROUTES) {
  Deno.test(`observers where a teleport lands that held its ghost keep seeing it, with its changes${through(chaos)}`, async () => {
    const h = twoCellsOf({ registry, cfg: { ghostRadius: 45 }, chaos });
    for (const c of [h.a, h.b]) configureSpaceAoI(c, { aoiRadius: 30, hysteresis: 5 });
    const p = h.a.createEntity("Jumper", { x: 95, y: 0, z: 50 }, { hp: 50 });
    const o = h.b.createEntity("Jumper", { x: 120, y: 0, z: 50 });
    const world = new ClientWorld(registry, { send: (b) => witnessOf(o)?.receive(b) });
    world.setPlayer(o.id, o.type);
    new Witness(o, {}, (f) => world.receive(f));
    await until(h, "the observer sees it through its ghost", () => world.entities.get(p.id)?.props.hp === 50);
    assert.ok(h.b.ghosts.has(p.id), "the observer's cell holds its ghost");
    const seen: string[] = [];
    world.on("leave", (ev) => seen.push(`leave ${ev.entity.id}`));
    world.on("enter", (ev) => seen.push(`enter ${ev.entity.id}`));
    await settle(h, p.teleport({ x: 130, y: 0, z: 60 }));
    const there = h.b.entities.get(p.id)!;
    assert.ok(there?.isReal && !h.b.ghosts.has(p.id));
    assert.ok(!h.a.entities.has(p.id), "real once");
    there.props.hp = 7;
    const copy = world.entities.get(p.id)!;
    await until(h, "its changes after the teleport arrive", () => copy.props.hp === 7);
    await until(h, "its copy where it landed", () => Math.abs(copy.position.x - 130) < 0.1);
    assert.ok(Math.abs(copy.position.z - 60) < 0.1, "where it landed");
    assert.deepEqual(seen, [], "the same life, the same copy: it never left");
    assert.equal(witnessOf(o)!.stateOf(there), "CREATED");
    there.position = { x: 125, y: 0, z: 55 };
    there.props.hp = 6;
    await until(h, "the next move and change", () => Math.abs(copy.position.x - 125) < 0.1 && copy.props.hp === 6);
    assert.equal(world.entities.get(p.id), copy);
    assert.deepEqual(seen, []);
  });
}

for (const chaos of ROUTES) {
  Deno.test(`a client's cached copy of an entity stays true across its teleport (the numbering goes on)${through(chaos)}`, async () => {
    const h = twoCellsOf({ registry, cfg: { ghostRadius: 45 }, chaos });
    for (const c of [h.a, h.b]) configureSpaceAoI(c, { aoiRadius: 30, hysteresis: 5 });
    const o = h.b.createEntity("Jumper", { x: 110, y: 0, z: 50 });
    const p = h.b.createEntity("Jumper", { x: 120, y: 0, z: 50 }, { hp: 50 });
    const bad: string[] = [];
    const world = new ClientWorld(registry, { send: (b) => witnessOf(o)?.receive(b) });
    world.setPlayer(o.id, o.type);
    new Witness(o, { onBadInput: (w) => bad.push(w) }, (f) => world.receive(f));
    await until(h, "the observer sees it", () => world.entities.has(p.id));
    for (let i = 1; i <= 4; i++) {
      p.props.hp = 50 + i;
      await h.tick(1);
    }
    await until(h, "its changes arrive", () => world.entities.get(p.id)?.props.hp === 54);
    // Away by a teleport: the client keeps its copy with its stamps.
    await settle(h, p.teleport({ x: 20, y: 0, z: 50 }));
    await until(h, "its leave", () => !world.entities.has(p.id));
    assert.ok(world.cache.has(p.id), "cached on leaving");
    // There, near the border (ghosted to the observer's cell, out of its view), hp changes first, then enough else
    // that a numbering restarted by the teleport would reach past the client's stamps with hp's change below them.
    const there = h.a.entities.get(p.id)!;
    there.position = { x: 60, y: 0, z: 50 };
    await until(h, "its ghost in the observer's cell", () => h.b.ghosts.has(p.id));
    assert.ok(!world.entities.has(p.id));
    there.props.hp = 7;
    for (let i = 1; i <= 6; i++) there.props.mood = i;
    await until(h, "the changes on its ghost", () => h.b.ghosts.get(p.id)?.props.mood === 6);
    // It walks back into view, seen through its ghost.
    there.position = { x: 95, y: 0, z: 50 };
    await until(h, "back in view, up to date", () => world.entities.get(p.id)?.props.mood === 6);
    const copy = world.entities.get(p.id)!;
    assert.deepEqual([copy.props.hp, copy.props.mood], [7, 6], "what changed while away came with the re-entry");
    assert.deepEqual(bad, []);
  });
}
