/**
 * What the SDK tells a game about updates, with a real witness writing to a client world: change paths of nested
 * updates, alias or full id, detail-level changes with the properties they delivered, whether a property has been
 * received at the current level, and the error bound of packed positions.
 */
import assert from "node:assert/strict";
import { createRegistry, defineEntity, T } from "../../core/def/mod.ts";
import { Cell } from "../../cell/cell.ts";
import type { Entity } from "../../cell/entity.ts";
import { Witness, type WitnessOptions } from "../../cell/witness/witness.ts";
import { ClientWorld, type WorldEvents } from "../../client/world.ts";
import { packedAxisError, positionErrorBound } from "../../client/position.ts";
import { loneCell } from "../../testing/lone_cell.ts";

const Seer = defineEntity({
  name: "Seer",
  hasCell: true,
  hasClient: true,
  volatile: { position: true, yaw: true },
  lodLevels: [{ label: "NEAR", distance: 20, hysteresis: 2 }],
  properties: {
    badge: { type: T.UINT8, flags: "OTHER_CLIENTS", detailLevel: "NEAR" },
    bag: { type: T.array(T.dict({ item: T.string(16), count: T.UINT8 })), flags: "OTHER_CLIENTS" },
    name: { type: T.string(16), flags: "ALL_CLIENTS" },
    secret: { type: T.UINT8, flags: "CELL_PRIVATE" },
  },
});
const registry = createRegistry({ entities: [Seer] });

function makeCell(): Cell {
  return loneCell({ registry }).cell;
}

function attach(e: Entity, opts: WitnessOptions = {}) {
  const ref: { witness?: Witness } = {};
  const world = new ClientWorld(registry, { send: (b) => ref.witness!.receive(b) });
  world.setPlayer(e.id, e.type);
  ref.witness = new Witness(e, opts, (f) => world.receive(f));
  const seen: string[] = [];
  const record = <K extends keyof WorldEvents>(kind: K, text: (ev: WorldEvents[K]) => string) =>
    world.on(kind, (ev) => seen.push(text(ev)));
  return { world, seen, record };
}

const at = (x: number, z = 0) => ({ x, y: 0, z });
const step = (cell: Cell, n = 1) => {
  for (let i = 0; i < n; i++) cell.tick(100);
};

Deno.test("property events carry the change path and whether the entity came by alias or by id", () => {
  const cell = makeCell();
  const me = cell.createEntity("Seer", at(0));
  const other = cell.createEntity("Seer", at(50), { bag: [{ item: "apple", count: 1 }, { item: "pear", count: 2 }] });
  const aliased = attach(me, { aoiRadius: 100, hysteresis: 5 });
  const byId = attach(cell.createEntity("Seer", at(-50)), { aoiRadius: 200, hysteresis: 5, maxAliases: 0 });
  for (const c of [aliased, byId]) {
    c.record("property", (ev) => `${ev.entity.id} ${ev.path} [${ev.change.path}] ${ev.byAlias ? "alias" : "id"}`);
    c.record("move", (ev) => `move ${ev.entity.id} ${ev.byAlias ? "alias" : "id"}`);
  }
  step(cell, 3);
  assert.ok(aliased.world.entities.has(other.id) && byId.world.entities.has(other.id));
  aliased.seen.length = byId.seen.length = 0;

  const bag = other.props.bag as { item: string; count: number }[];
  bag[1].count = 7;
  other.props.name = "o";
  step(cell);
  assert.deepEqual(aliased.seen, [`${other.id} bag[1].count [1,1] alias`, `${other.id} name [] alias`]);
  assert.deepEqual(byId.seen, [`${other.id} bag[1].count [1,1] id`, `${other.id} name [] id`]);
  assert.equal((aliased.world.entities.get(other.id)!.props.bag as { count: number }[])[1].count, 7);

  other.position = at(55);
  step(cell);
  assert.ok(aliased.seen.includes(`move ${other.id} alias`), aliased.seen.join("; "));
  assert.ok(byId.seen.includes(`move ${other.id} id`), byId.seen.join("; "));
});

Deno.test("detail-level changes say what they delivered; hasReceived tells a default from a received value", () => {
  const cell = makeCell();
  const me = cell.createEntity("Seer", at(0));
  const other = cell.createEntity("Seer", at(60), { badge: 9, name: "far" });
  const c = attach(me, { aoiRadius: 100, hysteresis: 5 });
  c.record("detailLevel", (ev) => `level ${ev.entity.id} ${ev.level} [${ev.names}]`);
  step(cell, 3);
  const seen = c.world.entities.get(other.id)!;
  assert.equal(seen.detailLevel, 1, "beyond NEAR");
  assert.equal(seen.props.badge, 0, "the badge reads as its default at this distance");
  assert.equal(c.world.hasReceived(seen, "badge"), false, "...and the SDK says it is not received");
  assert.equal(c.world.hasReceived(other.id, "name"), true);
  assert.equal(c.world.hasReceived(other.id, "bag"), true, "a property left at its default is known as such");
  assert.throws(() => c.world.hasReceived(seen, "secret"), /Seer has no property "secret" that other clients see/);
  assert.equal(c.world.hasReceived(99_999, "name"), false, "an entity not in the AoI");

  other.position = at(10);
  step(cell, 2);
  assert.deepEqual(c.seen, [`level ${other.id} 0 [badge]`]);
  assert.equal(seen.props.badge, 9);
  assert.equal(c.world.hasReceived(seen, "badge"), true);

  other.position = at(60);
  step(cell, 2);
  assert.deepEqual(c.seen.at(-1), `level ${other.id} 1 []`);
  assert.equal(c.world.hasReceived(seen, "badge"), false, "no longer kept up to date out there");
  other.props.badge = 3; // not sent while far
  other.position = at(10);
  step(cell, 2);
  assert.deepEqual(c.seen.at(-1), `level ${other.id} 0 [badge]`, "only what changed meanwhile comes back");
  assert.equal(seen.props.badge, 3);
});

Deno.test("the position error bound: finest at the reference, and positions held within it", () => {
  const cell = makeCell();
  const me = cell.createEntity("Seer", at(0));
  const c = attach(me, { aoiRadius: 400, hysteresis: 5 });
  const others = [3, 40, 150, 390].map((x) => cell.createEntity("Seer", at(x, -x / 2)));
  step(cell, 3);
  const w = c.world;
  assert.ok(w.scale > 0);
  assert.deepEqual(w.reference, { x: 0, y: 0, z: 0 });
  const worst = w.positionErrorBound();
  assert.equal(worst.x, w.scale / 2, "the coarsest octave: half a step of the scale");
  assert.ok(worst.y < worst.x, "Y has more mantissa bits");
  let last = 0;
  for (const o of others) {
    const held = w.entities.get(o.id)!.position;
    const bound = w.positionErrorBound(held);
    assert.ok(bound.x >= last && bound.x <= worst.x, `bounds grow away from the reference: ${bound.x}`);
    last = bound.x;
    assert.ok(Math.abs(held.x - o.x) <= bound.x, `x of ${o.x}: held ${held.x}, bound ${bound.x}`);
    assert.ok(Math.abs(held.z - o.z) <= bound.z, `z of ${o.z}: held ${held.z}, bound ${bound.z}`);
  }
  assert.equal(packedAxisError(0, 1), 2 ** -8, "at the reference: half a step of the [2, 4) octave");
  assert.deepEqual(positionErrorBound({ x: 0, y: 0, z: 0 }, 1, { x: 0, y: 0, z: 0 }).y, 2 ** -12);
});
