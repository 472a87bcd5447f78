/**
 * The fence around a hand-over (in memory: 4 cells over 2 "cellapps", bounds 0..200 × 0..200, split at x = 100 and
 * z = 100; cells 1 and 3 on cellapp "a", 2 and 4 on "b"): what is done to a real while its offload is in flight
 * ends on the new real, in order, and every ghost (the old cell's included) converges to it.
 */
import assert from "node:assert/strict";
import { createRegistry, defineEntity, T } from "../../core/def/mod.ts";
import { buildBsp } from "../../core/geo/mod.ts";
import { CellScript } from "../../core/script.ts";
import type { Entity } from "../../cell/entity.ts";
import type { GhostConfig } from "../../cell/borders/ghosts.ts";
import { cellsOf } from "../../testing/two_cells.ts";

const Walker = defineEntity({
  name: "Walker",
  hasCell: true,
  volatile: { position: true, yaw: true },
  properties: {
    hp: { type: T.INT32, flags: "OTHER_CLIENTS", default: 50 },
    secret: { type: T.INT32, flags: "CELL_PRIVATE" },
    bag: { type: T.array(T.UINT16), flags: "ALL_CLIENTS" },
  },
  cellMethods: { hit: { args: [{ name: "amount", type: T.INT32 }] } },
});
const registry = createRegistry({ entities: [Walker] });

/** Script callbacks run on a copy being handed over (there should be none). */
const fencedCalls: string[] = [];

class Hittable extends CellScript {
  override onTick(): void {
    if ((this.self as Entity).offloading) fencedCalls.push(`onTick of ${this.self.id}`);
  }
  override onEnteredRange(): void {
    if ((this.self as Entity).offloading) fencedCalls.push(`onEnteredRange of ${this.self.id}`);
  }
  hit(_caller: number, amount: number): number {
    const p = this.self.props as { hp: number };
    p.hp -= amount;
    return p.hp;
  }
}

type Cells = ReturnType<typeof cellsOf>;

function fourCells(cfg: Partial<GhostConfig> = {}, drop?: (def: string, args: unknown[]) => boolean): Cells {
  const tree = buildBsp({ minX: 0, minZ: 0, maxX: 200, maxZ: 200 }, [1, 2, 1, 2]);
  return cellsOf({ registry, scripts: { Walker: Hittable }, cfg, drop }, [0, 0, 200, 200], tree);
}

/** The real of `id` in every cell that has it, and its ghosts. */
function copies(h: Cells, id: number): { reals: Entity[]; ghosts: Map<number, Entity> } {
  const reals = h.cells.flatMap((c) => c.entities.get(id) ?? []);
  return { reals, ghosts: new Map(h.cells.flatMap((c) => c.ghosts.has(id) ? [[c.cellId, c.ghosts.get(id)!]] : [])) };
}

/** Ticks every cell once without delivering: the offload's request is left in flight. */
function tickOnly(h: Cells): void {
  for (const c of h.cells) c.tick(100);
}

const view = (e: Entity) => [e.props.hp, [...(e.props.bag as number[])], e.x, e.z];

Deno.test("what is set while an offload is in flight ends on the new real and on every ghost, the old cell's too", async () => {
  const h = fourCells();
  const c1 = h.cell(1);
  const e = c1.createEntity("Walker", { x: 95, y: 0, z: 95 });
  await h.tick(3);
  assert.deepEqual([...copies(h, e.id).ghosts.keys()].sort(), [2, 3, 4], "ghosted into its three neighbours");
  e.clientCallSeq = 41;
  c1.moveEntity(e, 115, 0, 115);
  tickOnly(h);
  assert.ok(e.offloading, "the offload to cell 4 is in flight");
  // 50 against 999: before the fence, the new real kept 50 and the old cell's ghost 999.
  e.props.hp = 999;
  e.props.secret = 7;
  (e.props.bag as number[]).push(1, 2);
  (e.props.bag as number[])[0] = 9;
  await h.flush();
  await h.tick(3);
  const { reals, ghosts } = copies(h, e.id);
  assert.equal(reals.length, 1, "real exactly once");
  const real = reals[0];
  assert.equal(real.cell.cellId, 4);
  assert.deepEqual(view(real), [999, [9, 2], 115, 115], "nothing set in flight was lost on the new real");
  assert.equal(real.props.secret, 7, "cell-private properties too");
  assert.equal(real.clientCallSeq, 41, "the number of the last client call it ran, for its base's replays");
  assert.deepEqual([...ghosts.keys()].sort(), [1, 2, 3]);
  for (const [cell, g] of ghosts) assert.deepEqual(view(g), view(real), `the ghost in cell ${cell} converged`);
});

Deno.test("writes in flight are done on the new real in their order, before the calls held meanwhile", async () => {
  const h = fourCells();
  const c1 = h.cell(1);
  const e = c1.createEntity("Walker", { x: 95, y: 0, z: 95 });
  const caller = c1.createEntity("Walker", { x: 50, y: 0, z: 50 });
  await h.tick(3);
  c1.moveEntity(e, 115, 0, 115);
  tickOnly(h);
  assert.ok(e.offloading);
  for (const v of [1, 2, 3]) e.props.hp = v;
  const answer = caller.call(e.id, "hit", 10);
  (e.props.bag as number[]).push(4);
  await h.flush();
  await h.tick(2);
  assert.equal(await answer, -7, "the held call ran on the new real after the writes: 3 - 10");
  const { reals, ghosts } = copies(h, e.id);
  assert.deepEqual(view(reals[0]).slice(0, 2), [-7, [4]]);
  for (const [cell, g] of ghosts) assert.deepEqual(view(g), view(reals[0]), `ghost in cell ${cell}`);
});

Deno.test("a real destroyed while its offload is in flight is gone everywhere, ghosts included", async () => {
  const h = fourCells();
  const c1 = h.cell(1);
  const e = c1.createEntity("Walker", { x: 95, y: 0, z: 95 });
  await h.tick(3);
  c1.moveEntity(e, 115, 0, 115);
  tickOnly(h);
  assert.ok(e.offloading);
  c1.destroyEntity(e, "killed in flight");
  await h.flush();
  await h.tick(3);
  const { reals, ghosts } = copies(h, e.id);
  assert.equal(reals.length, 0, `not real anywhere (real in ${reals.map((r) => r.cell.cellId)})`);
  assert.equal(ghosts.size, 0, `no ghost left (in ${[...ghosts.keys()]})`);
});

Deno.test("a hand-over that fails publishes what was set meanwhile where the real stayed", async () => {
  const h = fourCells();
  const c1 = h.cell(1);
  const e = c1.createEntity("Walker", { x: 95, y: 0, z: 95 });
  await h.tick(3);
  h.failOffloads(true);
  c1.moveEntity(e, 115, 0, 115);
  tickOnly(h);
  assert.ok(e.offloading);
  e.props.hp = 999;
  (e.props.bag as number[]).push(3);
  await h.flush();
  assert.ok(!e.offloading && c1.entities.get(e.id) === e, "still real in cell 1");
  await h.tick(2);
  const { reals, ghosts } = copies(h, e.id);
  assert.deepEqual(reals, [e]);
  assert.deepEqual(view(e).slice(0, 2), [999, [3]]);
  for (const [cell, g] of ghosts) assert.deepEqual(view(g), view(e), `ghost in cell ${cell}`);
  h.failOffloads(false);
  for (let i = 0; i < 20 && !h.cell(4).entities.has(e.id); i++) await h.tick(1);
  assert.equal(h.cell(4).entities.get(e.id)?.props.hp, 999, "a later attempt moved it, with the value");
});

Deno.test("a ghost still being created is not handed over as live: it exists once the real has moved", async () => {
  let dropped = 0;
  const h = fourCells({ createTimeoutMs: 500 }, (def, args) => {
    // The first creation of a ghost in cell 4 is never answered.
    if (def !== "createGhost" || (args[0] as { cellId: number }).cellId !== 4 || dropped > 0) return false;
    dropped++;
    return true;
  });
  const c1 = h.cell(1);
  const e = c1.createEntity("Walker", { x: 95, y: 0, z: 50 });
  await h.tick(3);
  assert.deepEqual([...copies(h, e.id).ghosts.keys()], [3]);
  // Past the hysteresis into cell 3, and into the ghost areas of cells 2 and 4 in the same tick.
  c1.moveEntity(e, 115, 0, 95);
  e.props.hp = 60;
  await h.tick(1);
  assert.equal(dropped, 1, "the ghost in cell 4 was asked for and lost");
  for (let i = 0; i < 30 && !h.cell(4).ghosts.has(e.id); i++) await h.tick(1);
  await h.tick(2);
  const { reals, ghosts } = copies(h, e.id);
  assert.equal(reals.length, 1);
  assert.equal(reals[0].cell.cellId, 3, "it moved to cell 3");
  assert.deepEqual([...ghosts.keys()].sort(), [1, 2, 4], "and has a ghost in each neighbour, cell 4 included");
  for (const [cell, g] of ghosts) assert.deepEqual(view(g), view(reals[0]), `ghost in cell ${cell}`);
});

Deno.test("a copy being handed over runs no script: its callbacks wait, and are heard only if it stays", async () => {
  fencedCalls.length = 0;
  const h = fourCells();
  const c1 = h.cell(1);
  const e = c1.createEntity("Walker", { x: 95, y: 0, z: 95 });
  e.addRangeTrigger(5);
  await h.tick(3);
  c1.moveEntity(e, 115, 0, 115);
  tickOnly(h); // the offload starts; its answer is not delivered for three ticks
  c1.createEntity("Walker", { x: 116, y: 0, z: 116 }); // in range of its trigger meanwhile
  tickOnly(h);
  tickOnly(h);
  assert.ok(e.offloading);
  await h.flush();
  await h.tick(1);
  assert.ok(h.cell(4).entities.has(e.id), "it moved");
  assert.deepEqual(fencedCalls, []);
  // When it stays, it hears what happened meanwhile.
  const stays = fourCells();
  const s1 = stays.cell(1);
  const f = s1.createEntity("Walker", { x: 95, y: 0, z: 95 });
  const entered: number[] = [];
  (f.script as unknown as { onEnteredRange: (id: number, other: Entity) => void }).onEnteredRange = (_id, other) =>
    void entered.push(other.id);
  f.addRangeTrigger(5);
  await stays.tick(3);
  stays.failOffloads(true);
  s1.moveEntity(f, 115, 0, 115);
  tickOnly(stays);
  assert.ok(f.offloading);
  const other = s1.createEntity("Walker", { x: 116, y: 0, z: 116 });
  assert.deepEqual(entered, [], "not while it is being handed over");
  await stays.flush();
  assert.ok(!f.offloading && s1.entities.get(f.id) === f, "it stayed");
  assert.deepEqual(entered, [other.id], "then, as it stayed");
});
