/**
 * A cell narrower than the ghost radius (in memory: three cells on three "cellapps" in a row, the middle one 60 m
 * wide, ghosts 115 m deep): reals are ghosted into every cell whose grown rect holds them, the non-adjacent one
 * too, and a witness sees everything within its AoI wherever it stands, also while it walks through the narrow cell,
 * with every counter in order and without a gap.
 */
import assert from "node:assert/strict";
import { createRegistry, defineEntity, T } from "../../core/def/mod.ts";
import type { BspNode } from "../../core/geo/mod.ts";
import type { Entity } from "../../cell/entity.ts";
import { configureSpaceAoI, Witness, witnessOf } from "../../cell/witness/witness.ts";
import { ClientWorld } from "../../client/world.ts";
import { cellsOf, type ManyCells } from "../../testing/two_cells.ts";

const Post = defineEntity({
  name: "Post",
  hasCell: true,
  hasClient: true,
  volatile: { position: true, yaw: true },
  properties: { counter: { type: T.UINT32, flags: "ALL_CLIENTS" } },
});
const registry = createRegistry({ entities: [Post] });

const AOI = 100;
const GHOST = 115;
/** Cell 1 is x < 200, cell 2 (narrower than the ghost radius) 200..260, cell 3 x >= 260. */
const tree: BspNode = {
  axis: "x",
  at: 200,
  left: { cell: { id: 1, cellapp: 1 } },
  right: { axis: "x", at: 260, left: { cell: { id: 2, cellapp: 2 } }, right: { cell: { id: 3, cellapp: 3 } } },
};

interface Setup {
  h: ManyCells;
  real(id: number): Entity | undefined;
  /** Creates a Post at x (z = 50) in the cell holding it. */
  post(x: number): Entity;
}

function setup(clientSink: (e: Entity) => ((frame: Uint8Array) => void) | undefined): Setup {
  const h = cellsOf({ registry, cfg: { ghostRadius: GHOST, checkMs: 100, minLifetimeMs: 500 }, clientSink }, [
    0,
    0,
    600,
    100,
  ], tree);
  for (const c of h.cells) configureSpaceAoI(c, { aoiRadius: AOI, hysteresis: 5 });
  const real = (id: number) => h.cells.map((c) => c.entities.get(id)).find((e) => e !== undefined);
  const post = (x: number) =>
    h.cells.find((c) => x >= c.rect.minX && x < c.rect.maxX)!.createEntity("Post", { x, y: 0, z: 50 });
  return { h, real, post };
}

Deno.test("reals are ghosted into a non-adjacent cell within the ghost radius, past a narrow cell", async () => {
  const { h, post } = setup(() => undefined);
  const near = [post(270), post(300), post(314)]; // cell 3, within 115 m of cell 1's edge at x = 200
  const far = post(330); // cell 3, 130 m from cell 1
  const left = [post(90), post(150)]; // cell 1, within 115 m of cell 3's edge at x = 260 only from x = 145
  await h.tick(10);
  const c1 = h.cell(1), c2 = h.cell(2), c3 = h.cell(3);
  for (const e of near) assert.ok(c1.ghosts.has(e.id), `cell 1 holds a ghost of entity ${e.id} at x = ${e.x}`);
  assert.ok(!c1.ghosts.has(far.id), "not of one beyond the ghost radius");
  assert.ok(c3.ghosts.has(left[1].id), "cell 3 holds a ghost of the cell-1 entity at x = 150");
  assert.ok(!c3.ghosts.has(left[0].id), "not of the one at x = 90");
  for (const e of [...near, far, ...left]) assert.ok(c2.ghosts.has(e.id), `the narrow cell holds entity ${e.id}`);
});

Deno.test("a witness walking through a cell narrower than the ghost radius sees all within its AoI, in order", async () => {
  const worlds = new Map<number, ClientWorld>();
  const { h, real, post } = setup((e) => {
    const w = worlds.get(e.id);
    return w ? (frame) => w.receive(frame) : undefined;
  });
  // Posts every 20 m across the three cells, counting up; a walker from x = 60 to x = 540.
  const posts: Entity[] = [];
  for (let x = 10; x < 600; x += 20) posts.push(post(x));
  const walker = post(60);
  const world = new ClientWorld(registry, { send: (b) => witnessOf(real(walker.id)!)?.receive(b) });
  world.setPlayer(walker.id, walker.type);
  worlds.set(walker.id, world);
  const problems: string[] = [];
  const last = new Map<number, number>();
  const inView = new Map<number, number>();
  const see = (id: number, v: unknown) => {
    if (typeof v !== "number") return;
    const l = last.get(id), iv = inView.get(id);
    if (l !== undefined && v < l) problems.push(`entity ${id} went back from ${l} to ${v}`);
    if (iv !== undefined && v > iv + 1) problems.push(`entity ${id} jumped from ${iv} to ${v} in view`);
    last.set(id, v);
    inView.set(id, v);
  };
  world.on("enter", (ev) => {
    inView.delete(ev.entity.id);
    see(ev.entity.id, ev.entity.props.counter);
  });
  world.on("leave", (ev) => inView.delete(ev.entity.id));
  world.on("property", (ev) => ev.name === "counter" && see(ev.entity.id, ev.value));
  new Witness(walker, {}, (frame) => world.receive(frame));
  await h.tick(10);

  const cellsVisited = new Set<number>();
  let checked = 0;
  for (let tick = 0; tick < 240; tick++) {
    const e = real(walker.id)!;
    if (!e.offloading) e.cell.moveEntity(e, Math.min(540, e.x + 2), 0, 50);
    for (const p of posts) {
      const r = real(p.id)!;
      (r.props as { counter: number }).counter++;
    }
    await h.tick(1);
    const now = real(walker.id)!;
    cellsVisited.add(now.cell.cellId);
    // What the client holds: every post within the AoI less a margin for the last tick's step and the hysteresis.
    for (const p of posts) {
      if (Math.abs(p.x - now.x) <= AOI - 5 && !world.entities.has(p.id)) {
        problems.push(`tick ${tick}: walker at x = ${now.x} in cell ${now.cell.cellId} misses the post at ${p.x}`);
      }
      checked++;
    }
  }
  await h.flush();
  assert.deepEqual([...cellsVisited].sort(), [1, 2, 3], "the walker went through every cell");
  assert.ok(checked > 1000 && inView.size > 5, `${checked} checks, ${inView.size} in view at the end`);
  assert.equal(h.cells.filter((c) => c.entities.has(walker.id)).length, 1, "the walker is real once");
  assert.deepEqual(problems.slice(0, 10), [], `${problems.length} problems`);
});

Deno.test("a cell shrunk to no width hands over a real standing beyond the space's bounds", async () => {
  const twoCells: BspNode = {
    axis: "x",
    at: 100,
    left: { cell: { id: 1, cellapp: 1 } },
    right: { cell: { id: 2, cellapp: 2 } },
  };
  const h = cellsOf(
    { registry, cfg: { ghostRadius: 30, checkMs: 100, minLifetimeMs: 300 } },
    [0, 0, 200, 100],
    twoCells,
  );
  // Past the space's far z edge, 60 m out: further than the ghost radius from any cell's rect within the bounds.
  const out = h.cell(2).createEntity("Post", { x: 150, y: 0, z: 160 });
  await h.tick(5);
  h.setTree({ ...twoCells, at: 200 }); // cell 2 retires: no width left
  await h.tick(20);
  await h.flush();
  assert.ok(h.cell(1).entities.has(out.id), "cell 1 took the real over");
  assert.ok(!h.cell(2).entities.has(out.id), "cell 2 holds no real");
});
