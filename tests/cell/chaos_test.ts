/**
 * The ghost, hand-over and teleport machinery through a route that delays, reorders and duplicates messages
 * (testing/route.ts), seeded so that a failure replays from its seed. A 4-cell space on 2 "cellapps" (cells 1
 * and 4 on "a", 2 and 3 on "b": neighbours on one cellapp talk through its loopback, the others over a channel).
 * Entities walk across the borders; every tick some of them are written to, directly on whichever copy a script
 * could hold (the real, or the old real while its hand-over is in flight) or through calls from other entities;
 * some teleport, and some hand-overs fail. Invariants: at every tick each entity is real (and not being handed over) at most once; at the end
 * each is real exactly once, every write is there, every call was answered, and every ghost is where its real
 * keeps one and equals the real (properties and position).
 */
import assert from "node:assert/strict";
import { createRegistry, defineEntity, T } from "../../core/def/mod.ts";
import type { BspNode } from "../../core/geo/mod.ts";
import { CellScript } from "../../core/script.ts";
import { seededRandom } from "../../core/random.ts";
import type { Cell } from "../../cell/cell.ts";
import type { Entity } from "../../cell/entity.ts";
import { cellsOf } from "../../testing/two_cells.ts";

const MARKS = 400;

const Walker = defineEntity({
  name: "Walker",
  hasCell: true,
  volatile: { position: true, yaw: true },
  properties: {
    hp: { type: T.INT32, flags: "OTHER_CLIENTS", default: 100 },
    /** One slot per write made to the entity: set once, by one writer, so no write can hide another. */
    marks: { type: T.array(T.UINT8), flags: "CELL_PUBLIC", default: new Array(MARKS).fill(0) },
  },
  cellMethods: { mark: { args: [{ name: "slot", type: T.UINT16 }] } },
});
const registry = createRegistry({ entities: [Walker] });

class Marked extends CellScript {
  mark(_caller: number, slot: number): number {
    (this.self.props.marks as number[])[slot] = 1;
    return slot;
  }
}

const tree: BspNode = {
  axis: "x",
  at: 100,
  left: { axis: "z", at: 100, left: { cell: { id: 1, cellapp: 1 } }, right: { cell: { id: 2, cellapp: 2 } } },
  right: { axis: "z", at: 100, left: { cell: { id: 3, cellapp: 2 } }, right: { cell: { id: 4, cellapp: 1 } } },
};

/** The copies of entity `id` that are real: handed over or not. */
function realCopies(cells: readonly Cell[], id: number): { settled: Entity[]; fenced: Entity[] } {
  const settled: Entity[] = [], fenced: Entity[] = [];
  for (const c of cells) {
    const e = c.entities.get(id);
    if (e) (e.offloading ? fenced : settled).push(e);
  }
  return { settled, fenced };
}

const ghostView = (e: Entity) => [e.props.hp, [...(e.props.marks as number[])].join(""), e.x, e.y, e.z, e.yaw];

for (const seed of [1, 2, 3, 4, 5]) {
  Deno.test(`ghosts, hand-overs and teleports through delays, reordering and duplicates (seed ${seed})`, async () => {
    const random = seededRandom(seed * 7919);
    const h = cellsOf(
      {
        registry,
        scripts: { Walker: Marked },
        cfg: { ghostRadius: 30, checkMs: 200, minLifetimeMs: 600, resyncAfterMs: 500, createTimeoutMs: 3000 },
        chaos: { seed, maxDelay: 3, duplicate: 0.2 },
      },
      [0, 0, 200, 200],
      tree,
    );
    const ids: number[] = [];
    for (let i = 0; i < 16; i++) {
      const x = 70 + random() * 60, z = 70 + random() * 60;
      const cell = h.cells.find((c) => x >= c.rect.minX && x < c.rect.maxX && z >= c.rect.minZ && z < c.rect.maxZ)!;
      ids.push(cell.createEntity("Walker", { x, y: 0, z }).id);
    }
    const jumpers = new Set(ids.slice(0, 4));
    const heading = new Map(ids.map((id) => [id, random() * 2 * Math.PI]));
    const slots = new Map(ids.map((id) => [id, 0]));
    const calls: Promise<unknown>[] = [];
    let fencedWrites = 0, teleports = 0;
    const real = (id: number) => realCopies(h.cells, id);
    for (let tick = 0; tick < 150; tick++) {
      // Now and then a cell refuses to take a real over: the old real stays, with what was done to it meanwhile.
      h.failOffloads(random() < 0.15);
      for (const id of ids) {
        const { settled, fenced } = real(id);
        assert.ok(settled.length <= 1, `entity ${id} real in cells ${settled.map((e) => e.cell.cellId)} at ${tick}`);
        const e = settled[0];
        if (e) {
          let a = heading.get(id)! + (random() - 0.5) * 0.6;
          let x = e.x + Math.sin(a) * 3, z = e.z + Math.cos(a) * 3;
          if (x < 50 || x > 150 || z < 50 || z > 150) {
            a += Math.PI;
            x = Math.min(150, Math.max(50, x));
            z = Math.min(150, Math.max(50, z));
          }
          heading.set(id, a);
          e.cell.moveEntity(e, x, 0, z);
          e.yaw = a;
          if (random() < 0.3) e.props.hp = Math.floor(random() * 1000);
          if (jumpers.has(id) && random() < 0.03) {
            teleports++;
            e.teleport({ x: 50 + random() * 100, y: 0, z: 50 + random() * 100 }).catch(() => teleports--);
          }
        }
        // A write, on a copy a script could hold: the old real while its hand-over is in flight, when there is one.
        const slot = slots.get(id)!;
        if (slot < MARKS && random() < 0.5) {
          const target = fenced.length > 0 && random() < 0.7 ? fenced[0] : e;
          if (target) {
            if (target.offloading) fencedWrites++;
            (target.props.marks as number[])[slot] = 1;
            slots.set(id, slot + 1);
          }
        }
        // A call from another entity, where that one is, to this one.
        const callerId = ids[Math.floor(random() * ids.length)];
        const caller = real(callerId).settled[0];
        const s = slots.get(id)!;
        if (caller && callerId !== id && s < MARKS && random() < 0.2) {
          if (caller.cell.entities.has(id) || caller.cell.ghosts.has(id)) {
            const call = caller.cell.runEntityCall(id, callerId, "mark", [s]);
            call.catch(() => {}); // reported below, with the others
            calls.push(call);
            slots.set(id, s + 1);
          }
        }
      }
      await h.tick(1);
    }
    // Settle: no more changes; ghosts check, resync and go where they are no longer wanted.
    h.failOffloads(false);
    await h.tick(60);
    await h.flush();
    const answered = await Promise.allSettled(calls);
    const failed = answered.filter((r) => r.status === "rejected").map((r) =>
      String((r as PromiseRejectedResult).reason)
    );
    assert.deepEqual(failed, [], "every call was answered");
    const offloads = h.cells.reduce((n, c) => n + c.offloadsIn, 0);
    assert.ok(offloads > 20, `${offloads} offloads: the entities did cross`);
    assert.ok(fencedWrites > 0, "some writes were made while a hand-over was in flight");
    assert.ok(teleports > 0, "some entities teleported");
    for (const id of ids) {
      const { settled, fenced } = real(id);
      assert.equal(fenced.length, 0, `entity ${id} is still being handed over`);
      assert.equal(settled.length, 1, `entity ${id} real in cells ${settled.map((e) => e.cell.cellId)}`);
      const e = settled[0];
      const marks = e.props.marks as number[];
      const missing = [...marks.keys()].filter((k) => k < slots.get(id)! && marks[k] !== 1);
      assert.deepEqual(missing, [], `entity ${id}: writes lost`);
      const links = [...(e.ghosting?.links.values() ?? [])];
      assert.ok(links.every((l) => l.state === "live"), `entity ${id}: a ghost still being created`);
      const linked = links.map((l) => l.cell).sort();
      const held = h.cells.filter((c) => c.ghosts.has(id)).map((c) => c.cellId).sort();
      assert.deepEqual(held, linked, `entity ${id} (real in cell ${e.cell.cellId}): ghosts where its real has links`);
      for (const c of h.cells) {
        const g = c.ghosts.get(id);
        if (!g) continue;
        assert.deepEqual(ghostView(g), ghostView(e), `entity ${id}: the ghost in cell ${c.cellId} equals its real`);
        assert.equal(g.ghostInfo!.realCell, e.cell.cellId, `entity ${id}: the ghost in cell ${c.cellId} knows where`);
      }
    }
    const lines = h.log.lines.filter((l) => l.startsWith("error"));
    assert.deepEqual(lines, [], "nothing logged as an error");
  });
}
