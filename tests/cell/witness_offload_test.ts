/**
 * A witness travels with its entity across a cell border (in memory: two cells, one route): the client keeps its
 * view, its caches, aliases and event numbers, and pays no extra bytes for the hand-over.
 */
import assert from "node:assert/strict";
import { createRegistry, defineEntity, T } from "../../core/def/mod.ts";
import { CellScript } from "../../core/script.ts";
import type { Entity } from "../../cell/entity.ts";
import { historyOf } from "../../cell/witness/event_history.ts";
import { configureSpaceAoI, Witness, witnessOf } from "../../cell/witness/witness.ts";
import { ClientWorld } from "../../client/world.ts";
import { type TwoCells, twoCellsOf } from "../../testing/two_cells.ts";

const Seer = defineEntity({
  name: "Seer",
  hasCell: true,
  hasClient: true,
  volatile: { position: true, yaw: true },
  lodLevels: [{ label: "NEAR", distance: 20, hysteresis: 2 }],
  properties: {
    hp: { type: T.INT32, flags: "OTHER_CLIENTS", default: 100 },
    badge: { type: T.UINT8, flags: "OTHER_CLIENTS", detailLevel: "NEAR" },
    mana: { type: T.INT32, flags: "OWN_CLIENT" },
  },
});
const registry = createRegistry({ entities: [Seer] });
const calls: string[] = [];

class Watcher extends CellScript {
  override onGetWitness() {
    calls.push(`get ${this.self.id}`);
  }
  override onLoseWitness() {
    calls.push(`lose ${this.self.id}`);
  }
  override onEnteredAoI(other: Entity) {
    calls.push(`entered ${other.id}`);
  }
  override onLeftAoI(other: Entity) {
    calls.push(`left ${other.id}`);
  }
}

const at = (x: number, z = 50) => ({ x, y: 0, z });

/** Two cells with AoI 30 (+5) and ghosts 45 m deep; a client for the first Seer created with `client`. */
function setup() {
  calls.length = 0;
  const ref: { id: number; world: ClientWorld; bytes: number[]; tick: number; h?: TwoCells } = {
    id: 0,
    world: null!,
    bytes: [],
    tick: 0,
  };
  const sink = (frame: Uint8Array) => {
    ref.bytes[ref.tick] = (ref.bytes[ref.tick] ?? 0) + frame.length;
    ref.world.receive(frame);
  };
  const h = ref.h = twoCellsOf({
    registry,
    scripts: { Seer: Watcher },
    cfg: { ghostRadius: 45 },
    clientSink: (e) => (e.id === ref.id ? sink : undefined),
  });
  for (const c of [h.a, h.b]) configureSpaceAoI(c, { aoiRadius: 30, hysteresis: 5 });
  const real = () => h.a.entities.get(ref.id) ?? h.b.entities.get(ref.id)!;
  ref.world = new ClientWorld(registry, { send: (b) => witnessOf(real())!.receive(b) });
  const client = (e: Entity) => {
    ref.id = e.id;
    ref.world.setPlayer(e.id, e.type);
    return new Witness(e, {}, sink);
  };
  const tick = async () => {
    ref.tick++;
    await h.tick(1);
  };
  return { ...h, ref, real, client, tick };
}

Deno.test("a player crossing the border keeps its view: no leave or enter, updates and aliases carry on", async () => {
  const t = setup();
  const { a, b, ref } = t;
  const p = a.createEntity("Seer", at(85));
  const left = a.createEntity("Seer", at(90));
  const right = b.createEntity("Seer", at(112));
  const w0 = t.client(p);
  for (let i = 0; i < 5; i++) await t.tick();
  const world = ref.world;
  assert.deepEqual([...world.entities.keys()].sort(), [left.id, right.id].sort());
  const enters = { ...world.counts };
  const kinds: string[] = [];
  world.on("enter", (ev) => kinds.push(`enter ${ev.entity.id}`));
  world.on("leave", (ev) => kinds.push(`leave ${ev.entity.id}`));
  calls.length = 0;
  let handOver = -1;
  for (let i = 0; i < 30; i++) {
    // Every tick: the player walks 1 m east, both others change a property and move a little.
    const me = t.real();
    me.cell.moveEntity(me, 85 + i, 0, 50);
    me.props.mana = i;
    left.props.hp = 200 + i;
    right.props.hp = 300 + i;
    a.moveEntity(left, 90, 0, 50 + (i % 3));
    b.moveEntity(right, 112, 0, 50 - (i % 3));
    const wasOnA = me.cell === a;
    await t.tick();
    if (wasOnA && b.entities.has(p.id)) handOver = ref.tick;
    const seenLeft = world.entities.get(left.id)!, seenRight = world.entities.get(right.id)!;
    // Property events, volatile positions (sent under the aliases) and own-client changes all keep flowing; what
    // the witness sees through a ghost is one tick behind (the ghost's batch follows the tick).
    if (handOver < 0 || ref.tick > handOver) {
      const lagged = (seen: number, now: number) => seen === now || seen === (i === 0 ? 100 : now - 1);
      assert.ok(lagged(seenLeft.props.hp as number, 200 + i), `left hp ${seenLeft.props.hp} at tick ${ref.tick}`);
      assert.ok(lagged(seenRight.props.hp as number, 300 + i), `right hp ${seenRight.props.hp} at ${ref.tick}`);
      const zs = (z: number) => [z, 50 + ((i + 2) % 3), 50 - ((i + 2) % 3)].some((v) => Math.abs(v - z) < 0.2);
      assert.ok(zs(seenLeft.position.z) && zs(seenRight.position.z), `positions at tick ${ref.tick}`);
      assert.equal(world.player!.container.values[registry.get("Seer").property("mana").index], i);
    }
  }
  assert.ok(handOver > 0, "the player's real moved to the other cell");
  const now = b.entities.get(p.id)!;
  const w1 = witnessOf(now)!;
  assert.ok(w1 && w1 !== w0 && w0.destroyed, "its witness came along; the old one ended");
  assert.equal(witnessOf(a.ghosts.get(p.id)!), undefined, "the ghost left behind has none");
  assert.deepEqual(kinds, [], "the client saw no entity leave or enter");
  assert.deepEqual(calls, [], "no onEnteredAoI/onLeftAoI/onGetWitness/onLoseWitness for the move");
  for (const k of ["enter", "create", "leave"]) assert.equal(world.counts[k] ?? 0, enters[k] ?? 0, k);
  assert.ok(w1.has(a.ghosts.get(left.id) ?? left) && w1.has(right), "both still in its AoI, as ghost and real");
  // The bytes around the hand-over: the old cell sends the hand-over tick's frame, the new one the next; neither
  // carries more than an ordinary tick (no enter, create or leave: only the normal updates).
  const ordinary = ref.bytes.slice(handOver - 8, handOver);
  const after = ref.bytes.slice(handOver, handOver + 3);
  const max = Math.max(...ordinary);
  assert.ok(after.every((n) => n <= max), `hand-over ticks ${after} vs ordinary ${ordinary}`);
});

Deno.test("entities the new cell lacks leave; a cache whose history is gone is refreshed, not re-entered", async () => {
  const t = setup();
  const { a, b, ref } = t;
  const p = a.createEntity("Seer", at(95));
  const far = a.createEntity("Seer", at(5)); // in the AoI by the game's hand, and never ghosted in b
  const right = b.createEntity("Seer", at(112));
  const w0 = t.client(p);
  w0.addToAoI(far);
  for (let i = 0; i < 5; i++) await t.tick();
  const world = ref.world;
  assert.ok(world.entities.has(far.id) && world.entities.has(right.id));
  const kinds: string[] = [];
  world.on("enter", (ev) => kinds.push(`enter ${ev.entity.id}`));
  world.on("leave", (ev) => kinds.push(`leave ${ev.entity.id}`));
  calls.length = 0;
  // The hand-over tick, by hand: meanwhile `right`'s history on b loses the events its cache would need.
  a.moveEntity(p, 111, 0, 50);
  ref.tick++;
  a.tick(100);
  const h = historyOf(right);
  right.props.hp = 1;
  h.trim();
  right.props.hp = 2;
  h.trim();
  assert.ok(h.trimmedTo > 1);
  b.tick(100);
  await t.flush();
  assert.ok(b.entities.has(p.id), "moved");
  await t.tick();
  await t.tick();
  assert.deepEqual(kinds, [`leave ${far.id}`], "only the entity the new cell does not hold left");
  assert.equal(world.entities.get(right.id)!.props.hp, 2, "the refresh brought the property up to date");
  const w1 = witnessOf(b.entities.get(p.id)!)!;
  assert.ok(w1.stats.refreshes >= 1, "through a refresh");
  assert.ok(!w1.has(far), "out of the AoI");
  right.props.hp = 3;
  await t.tick();
  assert.equal(world.entities.get(right.id)!.props.hp, 3, "events flow again after the refresh");
});

Deno.test("a failed hand-over keeps the witness running where it was", async () => {
  const t = setup();
  const { a, b, ref } = t;
  const p = a.createEntity("Seer", at(95));
  const right = b.createEntity("Seer", at(112));
  const w0 = t.client(p);
  for (let i = 0; i < 5; i++) await t.tick();
  t.failOffloads(true);
  a.moveEntity(p, 112, 0, 50);
  for (let i = 0; i < 3; i++) await t.tick();
  assert.ok(a.entities.has(p.id) && witnessOf(p) === w0 && !w0.destroyed, "still real, still seeing");
  right.props.hp = 7;
  await t.tick();
  await t.tick();
  assert.equal(ref.world.entities.get(right.id)!.props.hp, 7);
  t.failOffloads(false);
  for (let i = 0; i < 20 && !b.entities.has(p.id); i++) await t.tick();
  assert.ok(b.entities.has(p.id));
  right.props.hp = 8;
  await t.tick();
  await t.tick();
  assert.equal(ref.world.entities.get(right.id)!.props.hp, 8);
});
