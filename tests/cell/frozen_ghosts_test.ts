/**
 * Ghosts of a dead cellapp's reals (in memory: three cells in a row, each on its own "cellapp", one route). The
 * middle one dies; the cellappmgr's new tree gives its area to its neighbour. Its reals' ghosts in the other cells
 * stay, frozen, until a restored real takes them over or the restore timeout passes.
 */
import assert from "node:assert/strict";
import { createRegistry, defineEntity, T } from "../../core/def/mod.ts";
import type { BspNode } from "../../core/geo/mod.ts";
import type { Entity } from "../../cell/entity.ts";
import { configureSpaceAoI, Witness, witnessOf } from "../../cell/witness/mod.ts";
import { dropGhost, isFrozen } from "../../cell/borders/frozen_ghosts.ts";
import { ClientWorld } from "../../client/world.ts";
import { cellsOf, type ManyCells } from "../../testing/two_cells.ts";

const Walker = defineEntity({
  name: "Walker",
  hasCell: true,
  hasClient: true,
  volatile: { position: true, yaw: true },
  properties: {
    hp: { type: T.INT32, flags: "ALL_CLIENTS", default: 100 },
  },
});
const registry = createRegistry({ entities: [Walker] });

const leaf = (id: number): BspNode => ({ cell: { id, cellapp: id } });
/** Cell 1: x < 100, cell 2 (the one that dies): 100..150, cell 3: from 150. */
const tree: BspNode = {
  axis: "x",
  at: 100,
  left: leaf(1),
  right: { axis: "x", at: 150, left: leaf(2), right: leaf(3) },
};
/** What the cellappmgr makes of it without cell 2 (removeCell): cell 3 takes 100..150. */
const without2: BspNode = { axis: "x", at: 100, left: leaf(1), right: leaf(3) };
const RESTORE_TIMEOUT_MS = 1000;

interface Observer {
  entity: Entity;
  world: ClientWorld;
  /** "leave <id>" and "enter <id>" as the client saw them. */
  seen: string[];
}

function observe(e: Entity): Observer {
  const world = new ClientWorld(registry, { send: (b) => witnessOf(e)?.receive(b) });
  world.setPlayer(e.id, e.type);
  new Witness(e, {}, (f) => world.receive(f));
  const seen: string[] = [];
  world.on("leave", (ev) => seen.push(`leave ${ev.entity.id}`));
  world.on("enter", (ev) => seen.push(`enter ${ev.entity.id}`));
  return { entity: e, world, seen };
}

/** The three cells, an observer on each side of cell 2, and a real in cell 2 that both see through its ghosts. */
async function setUp(): Promise<{ h: ManyCells; victim: Entity; o1: Observer; o3: Observer }> {
  const h = cellsOf(
    { registry, cfg: { ghostRadius: 45, restoreTimeoutMs: RESTORE_TIMEOUT_MS } },
    [0, 0, 300, 100],
    tree,
  );
  for (const c of h.cells) configureSpaceAoI(c, { aoiRadius: 30, hysteresis: 5 });
  const victim = h.cell(2).createEntity("Walker", { x: 125, y: 0, z: 50 }, { hp: 50 });
  const o1 = observe(h.cell(1).createEntity("Walker", { x: 99, y: 0, z: 50 }));
  const o3 = observe(h.cell(3).createEntity("Walker", { x: 151, y: 0, z: 50 }));
  await h.tick(5);
  for (const c of [1, 3]) assert.ok(h.cell(c).ghosts.has(victim.id), `cell ${c} holds its ghost`);
  for (const o of [o1, o3]) {
    assert.equal(o.world.entities.get(victim.id)?.props.hp, 50, "seen through the ghost");
    o.seen.length = 0;
  }
  return { h, victim, o1, o3 };
}

Deno.test("ghosts of a dead cellapp's reals stay frozen (no leave), and go once the restore timeout passed", async () => {
  const { h, victim, o1, o3 } = await setUp();
  h.kill(2);
  h.setTree(without2);
  assert.deepEqual(h.cell(3).rect, { minX: 100, minZ: 0, maxX: 300, maxZ: 100 }, "cell 3 took the dead cell's area");
  for (const c of [1, 3]) {
    const ghost = h.cell(c).ghosts.get(victim.id);
    assert.ok(ghost && isFrozen(ghost.ghostInfo!), `cell ${c}: the ghost is still there, frozen`);
  }
  await h.tick(6); // 600 ms: within the timeout
  for (const c of [1, 3]) assert.ok(h.cell(c).ghosts.has(victim.id), `cell ${c} keeps the ghost within the timeout`);
  for (const o of [o1, o3]) {
    assert.deepEqual(o.seen, [], "observers see a pause, not a leave");
    assert.ok(o.world.entities.has(victim.id));
  }
  assert.ok(!h.log.lines.some((l) => /resync/.test(l)), "a frozen ghost asks its dead real for nothing");
  await h.tick(6); // 1200 ms: past the timeout and the next ghost check
  for (const c of [1, 3]) assert.ok(!h.cell(c).ghosts.has(victim.id), `cell ${c}: no ghost lingers past the timeout`);
  await h.tick(1);
  for (const o of [o1, o3]) {
    assert.deepEqual(o.seen, [`leave ${victim.id}`], "then observers see it leave");
    assert.ok(!o.world.entities.has(victim.id));
  }
  assert.ok(
    h.log.lines.some((l) =>
      /cell 1: 1 frozen ghost\(s\) dropped: their reals were not restored within 1000 ms/.test(l)
    ),
  );
});

Deno.test("a restored real takes over the frozen ghosts: observers see no leave and no enter, and its restored state", async () => {
  const { h, victim, o1, o3 } = await setUp();
  // The backup is older than what observers saw last.
  const backup = victim.serialise(h.cell(2).time);
  victim.props.hp = 60;
  await h.tick(2);
  assert.equal(o1.world.entities.get(victim.id)?.props.hp, 60);
  h.kill(2);
  h.setTree(without2);
  await h.tick(3);
  // Restored where the tree now puts it: cell 3, which holds a frozen ghost of it.
  const restored = h.cell(3).restoreEntity(backup);
  assert.ok(!h.cell(3).ghosts.has(victim.id) && h.cell(3).entities.get(victim.id) === restored);
  await h.tick(3);
  const ghost1 = h.cell(1).ghosts.get(victim.id);
  assert.ok(ghost1 && !isFrozen(ghost1.ghostInfo!), "cell 1's ghost now follows the restored real");
  assert.equal(ghost1.ghostInfo!.realCell, 3);
  for (const o of [o1, o3]) {
    assert.deepEqual(o.seen, [], "no leave, no enter");
    assert.equal(o.world.entities.get(victim.id)?.props.hp, 50, "observers have the restored value");
  }
  restored.props.hp = 70;
  restored.position = { x: 120, y: 0, z: 52 };
  await h.tick(3 + RESTORE_TIMEOUT_MS / 100); // past the restore timeout: nothing is dropped
  for (const o of [o1, o3]) {
    const copy = o.world.entities.get(victim.id)!;
    assert.equal(copy.props.hp, 70, "changes of the restored real arrive");
    assert.ok(Math.abs(copy.position.x - 120) < 0.1 && Math.abs(copy.position.z - 52) < 0.1);
    assert.deepEqual(o.seen, []);
  }
});

Deno.test("a restored real of another life replaces a frozen ghost: observers see it leave and enter again, whole", async () => {
  const { h, victim, o1 } = await setUp();
  const backup = victim.serialise(h.cell(2).time);
  h.kill(2);
  h.setTree(without2);
  // Cell 3 lost its ghost: the restored real there starts a numbering of its own.
  dropGhost(h.cell(3), h.cell(3).ghosts.get(victim.id)!);
  const restored = h.cell(3).restoreEntity({ ...backup, props: backup.props });
  restored.props.hp = 80;
  await h.tick(4);
  const ghost1 = h.cell(1).ghosts.get(victim.id);
  assert.ok(ghost1 && !isFrozen(ghost1.ghostInfo!) && ghost1.ghostInfo!.realCell === 3);
  assert.deepEqual(o1.seen, [`leave ${victim.id}`, `enter ${victim.id}`], "the other life replaces the client's copy");
  assert.equal(o1.world.entities.get(victim.id)?.props.hp, 80);
  await h.tick(RESTORE_TIMEOUT_MS / 100 + 2);
  assert.ok(h.cell(1).ghosts.has(victim.id), "the new ghost is not dropped by the old one's timeout");
});

Deno.test("a ghost of a live real cannot be replaced by a real of the same id", async () => {
  const { h, victim } = await setUp();
  const backup = victim.serialise(h.cell(2).time);
  assert.throws(() => h.cell(3).restoreEntity(backup), /it is a ghost there of a live real in cell 2 \(cellapp 2\)/);
  assert.ok(h.cell(3).ghosts.has(victim.id) && !h.cell(3).entities.has(victim.id), "nothing changed");
});
