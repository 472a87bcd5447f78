/**
 * Ghost resync (in memory): a ghost that lost a batch notices it without waiting for a later one, asks its real
 * wherever the real now is, and asks again until it is answered; repeated and reordered batches are harmless.
 */
import assert from "node:assert/strict";
import { createRegistry, defineEntity, T } from "../../core/def/mod.ts";
import { buildBsp } from "../../core/geo/mod.ts";
import type { Entity } from "../../cell/entity.ts";
import type { GhostOp } from "../../core/wire/mod.ts";
import { seededRandom } from "../../core/random.ts";
import { cellsOf, twoCellsOf } from "../../testing/two_cells.ts";

const Walker = defineEntity({
  name: "Walker",
  hasCell: true,
  volatile: { position: true, yaw: true },
  properties: {
    hp: { type: T.INT32, flags: "OTHER_CLIENTS", default: 100 },
    bag: { type: T.array(T.UINT16), flags: "ALL_CLIENTS" },
  },
});
const registry = createRegistry({ entities: [Walker] });

/** Drops the messages `pick` selects while `armed` says so; counts them. */
function dropper(pick: (def: string, args: unknown[]) => boolean) {
  const d = {
    armed: false,
    count: 0,
    fn: (def: string, args: unknown[]) => {
      if (!d.armed || !pick(def, args)) return false;
      d.count++;
      return true;
    },
  };
  return d;
}

const same = (g: Entity, e: Entity) =>
  assert.deepEqual([g.props.hp, [...(g.props.bag as number[])], g.x, g.z], [
    e.props.hp,
    [...(e.props.bag as number[])],
    e.x,
    e.z,
  ]);

Deno.test("a ghost that lost its real's last batch notices without a later one, and catches up", async () => {
  const d = dropper((def) => def === "ghostSync");
  const { a, b, tick, log } = twoCellsOf({ registry, cfg: { resyncAfterMs: 500 }, drop: d.fn });
  const e = a.createEntity("Walker", { x: 95, y: 0, z: 10 });
  await tick(3);
  const g = b.ghosts.get(e.id)!;
  d.armed = true;
  e.props.hp = 7; // its only batch is lost; nothing changes after it
  await tick(1);
  d.armed = false;
  assert.equal(d.count, 1);
  assert.equal(g.props.hp, 100);
  for (let i = 0; i < 20 && b.ghosts.get(e.id)!.props.hp !== 7; i++) await tick(1);
  same(b.ghosts.get(e.id)!, e);
  assert.ok(log.lines.some((l) => l.includes(`ghost Walker ${e.id} is missing updates`)));
});

Deno.test("a resync request that reaches the cell the real left goes on to the real", async () => {
  // Cells 1 and 3 on "a", 2 and 4 on "b"; the real moves from cell 1 to cell 3 and cell 2 misses the news.
  const d = dropper((def, args) => (def === "realMoved" || def === "ghostSync" || def === "ghostSeq") && args[1] === 2);
  const tree = buildBsp({ minX: 0, minZ: 0, maxX: 200, maxZ: 200 }, [1, 2, 1, 2]);
  const h = cellsOf({ registry, cfg: { resyncAfterMs: 500 }, drop: d.fn }, [0, 0, 200, 200], tree);
  const [c1, c2, c3] = [1, 2, 3].map((id) => h.cell(id));
  const e = c1.createEntity("Walker", { x: 95, y: 0, z: 95 });
  await h.tick(3);
  assert.ok(c2.ghosts.has(e.id) && c3.ghosts.has(e.id));
  d.armed = true;
  c1.moveEntity(e, 115, 0, 90);
  for (let i = 0; i < 10 && !c3.entities.has(e.id); i++) await h.tick(1);
  const real = c3.entities.get(e.id)!;
  assert.ok(real, "it moved to cell 3");
  real.props.hp = 5;
  await h.tick(2);
  d.armed = false;
  const g = c2.ghosts.get(e.id)!;
  assert.equal(g.ghostInfo!.realCell, 1, "cell 2 still believes the real is in cell 1");
  real.props.hp = 6; // a later batch shows the gap; the resync goes to cell 1, which sends it on
  for (let i = 0; i < 20 && c2.ghosts.get(e.id)!.props.hp !== 6; i++) await h.tick(1);
  same(c2.ghosts.get(e.id)!, real);
  assert.equal(c2.ghosts.get(e.id)!.ghostInfo!.realCell, 3, "and now knows where the real is");
});

Deno.test("a resync request that is lost is made again until answered", async () => {
  let lostResyncs = 0;
  const d = dropper((def) => def === "ghostSync");
  const { a, b, tick } = twoCellsOf({
    registry,
    cfg: { resyncAfterMs: 300 },
    drop: (def, args) => {
      if (def === "ghostResync" && lostResyncs < 2) return ++lostResyncs > 0;
      return d.fn(def, args);
    },
  });
  const e = a.createEntity("Walker", { x: 95, y: 0, z: 10 });
  await tick(3);
  d.armed = true;
  e.props.hp = 7;
  await tick(1);
  d.armed = false;
  for (let i = 0; i < 40 && b.ghosts.get(e.id)!.props.hp !== 7; i++) await tick(1);
  assert.equal(lostResyncs, 2, "two requests were lost");
  same(b.ghosts.get(e.id)!, e);
});

Deno.test("batches delivered twice and out of order leave the ghost as its real", async () => {
  const batches: [number, GhostOp[]][] = [];
  const { a, b, tick } = twoCellsOf({
    registry,
    drop: (def, args) => {
      if (def !== "ghostSync") return false;
      batches.push([args[3] as number, args[4] as GhostOp[]]);
      return true;
    },
  });
  const e = a.createEntity("Walker", { x: 95, y: 0, z: 10 });
  await tick(1); // the ghost is created with the state as it is
  const g = b.ghosts.get(e.id)!;
  for (let i = 0; i < 12; i++) {
    e.props.hp = i;
    (e.props.bag as number[]).push(i);
    a.moveEntity(e, 90 + (i % 5), 0, 10 + i);
    await tick(1);
  }
  assert.ok(batches.length >= 12);
  const random = seededRandom(5);
  const shuffled = [...batches, ...batches.filter(() => random() < 0.5)].sort(() => random() - 0.5);
  for (const [seq, ops] of shuffled) b.borders.receiveGhostSync(e.id, seq, structuredClone(ops));
  same(g, e);
  assert.equal(g.ghostInfo!.pending.size, 0);
});
