import assert from "node:assert/strict";
import { createRegistry, defineEntity, T } from "../../core/def/mod.ts";
import { Cell, type CellHost } from "../../cell/cell.ts";
import type { Entity } from "../../cell/entity.ts";
import { Witness, type WitnessOptions } from "../../cell/witness.ts";
import { clientsOf } from "../../cell/witness_clients.ts";
import { ClientWorld } from "../../client/world.ts";
import { memoryLogger } from "../helpers/log.ts";

const Hero = defineEntity({
  name: "Hero",
  hasCell: true,
  hasClient: true,
  volatile: { position: true, yaw: true },
  lodLevels: [{ label: "NEAR", distance: 30, hysteresis: 3 }],
  properties: {
    name: { type: T.string(16), flags: "ALL_CLIENTS" },
    hp: { type: T.INT32, flags: "OTHER_CLIENTS", default: 100 },
    badge: { type: T.UINT8, flags: "OTHER_CLIENTS", detailLevel: "NEAR" },
    mood: { type: T.STRING, flags: "OTHER_CLIENTS", sendLatestOnly: true },
    bag: { type: T.array(T.UINT16), flags: "OTHER_CLIENTS" },
    gold: { type: T.UINT32, flags: "OWN_CLIENT" },
  },
  clientMethods: {
    wave: { args: [T.UINT8], detailDistance: 30 },
    shout: { args: [T.STRING] },
  },
});
const Rock = defineEntity({
  name: "Rock",
  hasCell: true,
  hasClient: true,
  properties: { tag: { type: T.UINT8, flags: "OTHER_CLIENTS" } },
});
const registry = createRegistry({ entities: [Hero, Rock] });

function makeCell(): Cell {
  let next = 1;
  const host = {
    registry,
    scripts: {},
    log: memoryLogger(),
    budgetMs: 100,
    newEntityId: () => next++,
    requestShutDown: () => {},
    cellGone: () => {},
    cellEntityDestroyed: () => {},
  } as unknown as CellHost;
  return new Cell(host, {
    spaceId: 1,
    bounds: [-5000, -5000, 5000, 5000],
    tree: { cell: { id: 1, cellapp: 1 } },
    isDefault: true,
  }, 1);
}

function attach(e: Entity, opts: WitnessOptions = {}, answer = true) {
  const ref: { witness?: Witness } = {};
  const bad: string[] = [];
  const world = new ClientWorld(registry, { send: (b) => answer && ref.witness!.receive(b) });
  world.setPlayer(e.id, e.type);
  const witness = ref.witness = new Witness(
    e,
    { onBadInput: (w) => void bad.push(w), ...opts },
    (f) => world.receive(f),
  );
  return { witness, world, bad };
}

function step(cell: Cell, n = 1): void {
  for (let i = 0; i < n; i++) {
    cell.tick(100); // the cell updates its witnesses at the end of each tick
  }
}

const at = (x: number, z = 0) => ({ x, y: 0, z });

Deno.test("cache round trip: after a leave, re-entry sends only what changed since the client's stamps", () => {
  const cell = makeCell();
  const me = cell.createEntity("Hero", at(0));
  const other = cell.createEntity("Hero", at(10), { name: "bob", hp: 50, badge: 3, bag: [1, 2] });
  const c = attach(me, { aoiRadius: 100, hysteresis: 0 });
  const enters: { fromCache: boolean; sent: string[] }[] = [];
  c.world.on("enter", (ev) => void enters.push({ fromCache: ev.fromCache, sent: ev.sent }));
  step(cell, 4);
  assert.deepEqual(enters, [{ fromCache: false, sent: ["name", "hp", "mood", "bag"] }]);
  assert.equal(c.world.entities.get(other.id)!.props.badge, 3, "the NEAR level followed the create");
  other.position = at(300);
  step(cell, 3);
  assert.ok(!c.world.entities.has(other.id));
  assert.deepEqual(c.world.cache.get(other.id)!.stamps.length, 2);
  other.props.hp = 7;
  other.position = at(10);
  step(cell, 4);
  assert.deepEqual(enters[1], { fromCache: true, sent: ["hp"] });
  const seen = c.world.entities.get(other.id)!.props;
  assert.deepEqual([seen.name, seen.hp, seen.badge, [...seen.bag as number[]]], ["bob", 7, 3, [1, 2]]);
  // A NEAR property changed while away comes with the detail level, and only it.
  other.position = at(300);
  step(cell, 3);
  other.props.badge = 9;
  other.position = at(10);
  const levels: string[][] = [];
  c.world.on("detailLevel", (ev) => void levels.push(ev.names));
  step(cell, 4);
  assert.deepEqual(enters[2], { fromCache: true, sent: [] });
  assert.deepEqual(levels, [["badge"]]);
  assert.equal(c.world.entities.get(other.id)!.props.badge, 9);
  assert.deepEqual(c.bad, []);
});

Deno.test("stale stamps get the full state; bad and future stamps are clamped and reported", () => {
  const cell = makeCell();
  const me = cell.createEntity("Hero", at(0));
  const other = cell.createEntity("Hero", at(10), { name: "bob", hp: 50 });
  const c = attach(me, { aoiRadius: 100, hysteresis: 0, historyHorizonMs: 200 });
  const enters: string[][] = [];
  c.world.on("enter", (ev) => void enters.push(ev.sent));
  step(cell, 4);
  other.position = at(300);
  step(cell, 3);
  // Changes while away, over more than two horizons: the history trims past the client's stamps.
  for (let i = 0; i < 6; i++) {
    other.props.hp = i;
    step(cell, 1);
  }
  other.position = at(10);
  step(cell, 4);
  assert.deepEqual(enters[1], ["name", "hp", "mood", "bag"]);
  // A client claiming events that never happened, and more levels than there are.
  other.position = at(300);
  step(cell, 3);
  c.world.cache.get(other.id)!.stamps = [1e6, 1e6, 1e6];
  other.position = at(10);
  step(cell, 4);
  assert.deepEqual(enters[2], ["name", "hp", "mood", "bag"]);
  assert.equal(c.bad.length, 2, c.bad.join("; "));
  assert.match(c.bad[0], /3 LoD stamps for Hero \d+; it has 2 levels/);
  assert.match(c.bad[1], /beyond its last event/);
  // A request nobody asked for, and garbage, are bad input too.
  c.witness.receive(new Uint8Array([48, other.id, 0]));
  c.witness.receive(new Uint8Array([99]));
  assert.equal(c.bad.length, 4);
});

Deno.test("a cache waiting for a request that never comes times out and is created whole", () => {
  const cell = makeCell();
  const me = cell.createEntity("Hero", at(0));
  const other = cell.createEntity("Hero", at(10), { name: "x" });
  const c = attach(me, { aoiRadius: 100, requestTimeoutMs: 500 }, false);
  step(cell, 3);
  assert.equal(c.witness.stateOf(other), "REQUEST_PENDING");
  assert.ok(!c.world.entities.has(other.id));
  step(cell, 5);
  assert.equal(c.witness.stats.timeouts, 1);
  assert.equal(c.witness.stateOf(other), "CREATED");
  assert.equal(c.world.entities.get(other.id)!.props.name, "x");
});

Deno.test("history trimming: a cache that falls behind the trimmed history is refreshed, not left stale", () => {
  const cell = makeCell();
  const me = cell.createEntity("Hero", at(0));
  const other = cell.createEntity("Hero", at(10));
  const c = attach(me, { aoiRadius: 100, historyHorizonMs: 100 });
  step(cell, 4);
  // The witness misses a few ticks (a stalled client, say) while the history trims twice.
  for (let i = 1; i <= 5; i++) {
    cell.time += 100; // time passes, but no tick updates the witness
    other.props.hp = i;
    other.props.name = `n${i}`;
  }
  assert.ok(other.props.hp === 5 && c.witness.stats.refreshes === 0);
  step(cell, 2);
  assert.equal(c.witness.stats.refreshes, 1);
  const seen = c.world.entities.get(other.id)!.props;
  assert.deepEqual([seen.hp, seen.name], [5, "n5"]);
  // Caught up: later changes flow as events again.
  other.props.hp = 6;
  step(cell, 2);
  assert.equal(seen.hp, 6);
  assert.equal(c.witness.stats.refreshes, 1);
});

Deno.test("sendLatestOnly keeps one event; nested changes arrive as paths", () => {
  const cell = makeCell();
  const me = cell.createEntity("Hero", at(0));
  const other = cell.createEntity("Hero", at(10));
  const c = attach(me, { aoiRadius: 100 });
  step(cell, 4);
  const got: string[] = [];
  c.world.on("property", (ev) => void got.push(`${ev.name}=${JSON.stringify(ev.value)}`));
  other.props.mood = "a";
  other.props.hp = 1;
  other.props.mood = "b";
  other.props.mood = "c";
  (other.props.bag as number[]).push(4, 5);
  (other.props.bag as number[])[0] = 9;
  step(cell, 2);
  assert.deepEqual(got, ["hp=1", 'mood="c"', "bag=[4,5]", "bag=[9,5]"]);
});

Deno.test("id aliases: 0..254 for volatile entities, full ids once they run out, reused after a leave", () => {
  const cell = makeCell();
  const me = cell.createEntity("Hero", at(0));
  const heroes = [1, 2, 3, 4].map((i) => cell.createEntity("Hero", at(i * 5)));
  const rock = cell.createEntity("Rock", at(3));
  const c = attach(me, { aoiRadius: 100, maxAliases: 2 });
  step(cell, 4);
  const alias = (e: Entity) => c.world.entities.get(e.id)!.alias;
  assert.deepEqual(heroes.map(alias).sort(), [0, 1, 255, 255]);
  assert.equal(alias(rock), 255, "no volatile data, no alias");
  for (let t = 0; t < 5; t++) {
    heroes.forEach((h, i) => h.position = at(i * 5 + 5 + t, t));
    step(cell);
  }
  heroes.forEach((h) => assert.ok(Math.abs(c.world.entities.get(h.id)!.position.z - h.z) < 0.05));
  const aliased = heroes.find((h) => alias(h) === 0)!;
  aliased.position = at(500);
  step(cell, 3);
  const late = cell.createEntity("Hero", at(20));
  step(cell, 4);
  assert.equal(alias(late), 0);
});

Deno.test("addToAoI / removeFromAoI: the game's entities are seen whatever the distance", () => {
  const cell = makeCell();
  const me = cell.createEntity("Hero", at(0));
  const far = cell.createEntity("Hero", at(1000), { name: "far" });
  const near = cell.createEntity("Hero", at(10));
  const c = attach(me, { aoiRadius: 100 });
  c.witness.addToAoI(far);
  c.witness.addToAoI(near);
  step(cell, 4);
  assert.ok(c.world.entities.has(far.id) && c.world.entities.has(near.id));
  far.position = at(2000);
  step(cell, 3);
  assert.ok(Math.abs(c.world.entities.get(far.id)!.position.x - 2000) < 0.01);
  c.witness.removeFromAoI(far);
  c.witness.removeFromAoI(near);
  step(cell, 3);
  assert.ok(!c.world.entities.has(far.id));
  assert.ok(c.world.entities.has(near.id), "still inside the trigger");
  // A destroyed entity leaves even if added by hand.
  c.witness.addToAoI(far);
  step(cell, 4);
  far.destroy();
  step(cell, 2);
  assert.ok(!c.world.entities.has(far.id));
});

Deno.test("client methods: other/all/own clients, DetailDistance, in order with property changes", () => {
  const cell = makeCell();
  const speaker = cell.createEntity("Hero", at(0));
  const close = cell.createEntity("Hero", at(15));
  const away = cell.createEntity("Hero", at(60));
  const own = attach(speaker, { aoiRadius: 100 });
  const cc = attach(close, { aoiRadius: 100 });
  const ca = attach(away, { aoiRadius: 100 });
  step(cell, 4);
  const heard = (w: ClientWorld) => {
    const out: string[] = [];
    w.on("method", (ev) => ev.entity.id === speaker.id && out.push(`${ev.name}(${ev.args})`));
    w.on("property", (ev) => ev.entity.id === speaker.id && out.push(`${ev.name}=${ev.value}`));
    w.on("ownMethod", (ev) => out.push(`own ${ev.name}(${ev.args})`));
    w.on("ownProperty", (ev) => out.push(`own ${ev.name}=${ev.value}`));
    return out;
  };
  const [hs, hc, ha] = [own.world, cc.world, ca.world].map(heard);
  const clients = clientsOf(speaker);
  speaker.props.hp = 1;
  clients.otherClients.wave(3);
  speaker.props.hp = 2;
  clients.allClients.shout("hi");
  clients.ownClient.shout("me");
  speaker.props.gold = 10;
  speaker.props.name = "s";
  step(cell, 3);
  assert.deepEqual(hc, ["hp=1", "wave(3)", "hp=2", "shout(hi)", "name=s"]);
  assert.deepEqual(ha, ["hp=1", "hp=2", "shout(hi)", "name=s"], "wave has DetailDistance 30");
  assert.deepEqual(hs, ["own shout(hi)", "own shout(me)", "own gold=10", "own name=s"]);
  assert.throws(() => clients.otherClients.wave(300), /Hero\.wave argument/);
  assert.throws(() => clients.otherClients.wave(), /takes 1 argument/);
});

Deno.test("an entity added by the game and destroyed out of the AoI trigger's reach leaves once", () => {
  const cell = makeCell();
  const me = cell.createEntity("Hero", at(0));
  const far = cell.createEntity("Hero", at(3000));
  const c = attach(me, { aoiRadius: 100 });
  c.witness.addToAoI(far);
  step(cell, 3);
  assert.ok(c.world.entities.has(far.id));
  let leaves = 0;
  c.world.on("leave", () => leaves++);
  far.destroy();
  step(cell, 5);
  assert.equal(leaves, 1);
  assert.ok(!c.world.entities.has(far.id) && !c.witness.has(far) && c.witness.aoiSize === 0);
});
