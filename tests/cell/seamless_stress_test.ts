/**
 * A stress of the seamless machinery in one process: players with clients walk
 * fast over a 4-cell space on 2 "cellapps" (offloads of observers and of the
 * observed, ghosts appearing and going) while each raises a counter now and
 * then. Every client must see every counter in order and without a gap while
 * the entity stays in its view, and every entity stays real exactly once.
 */
import assert from "node:assert/strict";
import { createRegistry, defineEntity, T } from "../../core/def/mod.ts";
import type { BspNode } from "../../core/geo/mod.ts";
import type { Entity } from "../../cell/entity.ts";
import { configureSpaceAoI, Witness, witnessOf } from "../../cell/witness/witness.ts";
import { ClientWorld } from "../../client/world.ts";
import { cellsOf } from "../../testing/two_cells.ts";
import { seededRandom } from "../../core/random.ts";

const Runner = defineEntity({
  name: "Runner",
  hasCell: true,
  hasClient: true,
  volatile: { position: true, yaw: true },
  properties: { counter: { type: T.UINT32, flags: "ALL_CLIENTS" } },
});
const registry = createRegistry({ entities: [Runner] });

const rng = seededRandom;

const tree: BspNode = {
  axis: "x",
  at: 100,
  left: { axis: "z", at: 100, left: { cell: { id: 1, cellapp: 1 } }, right: { cell: { id: 2, cellapp: 2 } } },
  right: { axis: "z", at: 100, left: { cell: { id: 3, cellapp: 2 } }, right: { cell: { id: 4, cellapp: 1 } } },
};

for (const seed of [1, 2, 3]) {
  Deno.test(`players crossing cells at speed see every counter in order and without gaps (seed ${seed})`, async () => {
    const random = rng(seed);
    const worlds = new Map<number, ClientWorld>();
    const h = cellsOf(
      {
        registry,
        cfg: { ghostRadius: 45, checkMs: 200, minLifetimeMs: 1000 },
        clientSink: (e) => {
          const w = worlds.get(e.id);
          return w ? (frame) => w.receive(frame) : undefined;
        },
      },
      [0, 0, 200, 200],
      tree,
    );
    for (const c of h.cells) configureSpaceAoI(c, { aoiRadius: 30, hysteresis: 5 });
    const real = (id: number): Entity | undefined => {
      for (const c of h.cells) {
        const e = c.entities.get(id);
        if (e) return e;
      }
      return undefined;
    };
    const ids: number[] = [];
    let gaps = 0, outOfOrder = 0, views = 0;
    const problems: string[] = [];
    for (let i = 0; i < 24; i++) {
      const x = 80 + random() * 40, z = 80 + random() * 40;
      const cell = h.cells.find((c) => x >= c.rect.minX && x < c.rect.maxX && z >= c.rect.minZ && z < c.rect.maxZ)!;
      const e = cell.createEntity("Runner", { x, y: 0, z });
      ids.push(e.id);
      const world = new ClientWorld(registry, { send: (b) => witnessOf(real(e.id)!)?.receive(b) });
      world.setPlayer(e.id, e.type);
      worlds.set(e.id, world);
      const inView = new Map<number, number>(), last = new Map<number, number>();
      const see = (id: number, v: unknown) => {
        if (typeof v !== "number") return;
        const l = last.get(id), iv = inView.get(id);
        if (l !== undefined && v < l) {
          outOfOrder++;
          problems.push(`client ${e.id}: entity ${id} went back from ${l} to ${v}`);
        }
        if (iv !== undefined && v > iv + 1) {
          gaps++;
          problems.push(`client ${e.id}: entity ${id} jumped from ${iv} to ${v} in view`);
        }
        last.set(id, v);
        inView.set(id, v);
      };
      world.on("enter", (ev) => {
        views++;
        inView.delete(ev.entity.id);
        see(ev.entity.id, ev.entity.props.counter);
      });
      world.on("leave", (ev) => inView.delete(ev.entity.id));
      world.on("property", (ev) => ev.name === "counter" && see(ev.entity.id, ev.value));
      world.on("detailLevel", (ev) => ev.names.includes("counter") && see(ev.entity.id, ev.entity.props.counter));
      new Witness(e, {}, (frame) => world.receive(frame));
    }
    const heading = new Map(ids.map((id) => [id, random() * 2 * Math.PI]));
    let offloads = 0;
    for (let tick = 0; tick < 300; tick++) {
      for (const id of ids) {
        const e = real(id);
        if (!e || e.offloading) continue;
        let a = heading.get(id)! + (random() - 0.5) * 0.5;
        let x = e.x + Math.sin(a) * 3, z = e.z + Math.cos(a) * 3;
        if (x < 40 || x > 160 || z < 40 || z > 160) {
          a += Math.PI;
          x = Math.min(160, Math.max(40, x));
          z = Math.min(160, Math.max(40, z));
        }
        heading.set(id, a);
        e.cell.moveEntity(e, x, 0, z);
        if (random() < 0.2) (e.props as { counter: number }).counter++;
      }
      await h.tick(1);
      offloads = h.cells.reduce((n, c) => n + c.offloadsIn, 0);
      for (const id of ids) {
        const n = h.cells.filter((c) => c.entities.has(id)).length;
        assert.ok(n <= 1, `entity ${id} real in ${n} cells at tick ${tick}`);
      }
    }
    await h.flush();
    assert.ok(offloads > 50, `${offloads} offloads: the players did cross`);
    assert.ok(views > 100, `${views} enters seen`);
    for (const id of ids) assert.equal(h.cells.filter((c) => c.entities.has(id)).length, 1, `entity ${id} real once`);
    assert.deepEqual(problems.slice(0, 10), [], `${gaps} gaps, ${outOfOrder} out of order`);
  });
}
