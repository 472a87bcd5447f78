import assert from "node:assert/strict";
import { createRegistry, defineEntity, T } from "../../core/def/mod.ts";
import { Cell } from "../../cell/cell.ts";
import type { Entity } from "../../cell/entity.ts";
import { Witness, type WitnessOptions } from "../../cell/witness/witness.ts";
import { clientsOf } from "../../cell/witness/witness_clients.ts";
import { ClientWorld } from "../../client/world.ts";
import { loneCell } from "../../testing/lone_cell.ts";

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
/** Server-only types: no client part at all, and a client part with nothing a client sees. */
const Spawner = defineEntity({
  name: "Spawner",
  hasCell: true,
  hasClient: false,
  volatile: { position: true },
  properties: { next: { type: T.UINT32, flags: "CELL_PUBLIC" } },
});
const Marker = defineEntity({
  name: "Marker",
  hasCell: true,
  hasClient: true,
  volatile: { position: true, yaw: true },
  properties: { note: { type: T.UINT8, flags: "CELL_PRIVATE" } },
});
const registry = createRegistry({ entities: [Hero, Rock, Spawner, Marker] });

function makeCell(): Cell {
  return loneCell({ registry }).cell;
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

Deno.test("a relog (same id, numbering restarted) refreshes the client's cached copy; its old stamps are no bad input", () => {
  const cell = makeCell();
  const me = cell.createEntity("Hero", at(0));
  const other = cell.createEntity("Hero", at(10), { name: "bob", hp: 50 });
  const c = attach(me, { aoiRadius: 100, hysteresis: 0 });
  const enters: { fromCache: boolean; sent: string[] }[] = [];
  c.world.on("enter", (ev) => void enters.push({ fromCache: ev.fromCache, sent: ev.sent }));
  step(cell, 4);
  // Changes enough that the old life's stamps are past anything the new life has numbered.
  for (let i = 0; i < 5; i++) {
    other.props.mood = `m${i}`;
    step(cell);
  }
  other.position = at(300);
  step(cell, 3);
  const cached = c.world.cache.get(other.id)!;
  assert.ok(cached.stamps.every((s) => s >= 5), `stamps ${cached.stamps}`);
  // The player logs out and in again: the same id, a new cell entity whose event numbers start again.
  const id = other.id;
  other.destroy();
  step(cell, 2);
  const again = cell.createEntity("Hero", at(10), { name: "bob", hp: 7 }, undefined, id);
  step(cell, 4);
  assert.equal(enters.length, 2);
  assert.equal(enters[1].fromCache, false, "a cache of another life is not reused");
  const seen = c.world.entities.get(id)!;
  assert.equal(seen.props.hp, 7, "the real's hp, not the cached 50");
  assert.equal(seen.props.mood, "", "nothing of the old life survives");
  assert.deepEqual(c.bad, [], "old-life stamps are normal input");
  // Its changes flow as usual afterwards.
  again.props.hp = 8;
  step(cell, 2);
  assert.equal(seen.props.hp, 8);
});

Deno.test("an entity made again with the same id before its leave went out leaves, then enters as the new one", () => {
  const cell = makeCell();
  const me = cell.createEntity("Hero", at(0));
  const other = cell.createEntity("Hero", at(10), { name: "bob", hp: 50 });
  const c = attach(me, { aoiRadius: 100, hysteresis: 0 });
  step(cell, 4);
  const seen: string[] = [];
  c.world.on("leave", (ev) => void seen.push(`leave ${ev.entity.id} hp=${ev.entity.props.hp}`));
  c.world.on("enter", (ev) => void seen.push(`enter ${ev.entity.id} hp=${ev.entity.props.hp}`));
  // Destroyed and made again within one tick: the witness still holds the old one's leave.
  const id = other.id;
  other.destroy();
  const again = cell.createEntity("Hero", at(12), { name: "bob", hp: 7 }, undefined, id);
  step(cell, 4);
  assert.deepEqual(seen, [`leave ${id} hp=50`, `enter ${id} hp=7`]);
  assert.ok(c.witness.has(again) && c.witness.stateOf(again) === "CREATED");
  again.props.hp = 3;
  step(cell, 2);
  assert.equal(c.world.entities.get(id)!.props.hp, 3);
  assert.deepEqual(c.bad, []);
});

Deno.test("types without a client part never reach a client, but stay in range queries and triggers", () => {
  const cell = makeCell();
  assert.ok(!registry.get("Spawner").canBeOnClient && !registry.get("Marker").canBeOnClient);
  assert.ok(registry.get("Hero").canBeOnClient && registry.get("Rock").canBeOnClient);
  const me = cell.createEntity("Hero", at(0));
  const spawner = cell.createEntity("Spawner", at(5));
  const marker = cell.createEntity("Marker", at(8));
  const rock = cell.createEntity("Rock", at(9));
  const c = attach(me, { aoiRadius: 100 });
  step(cell, 4);
  spawner.props.next = 3;
  spawner.position = at(6);
  marker.position = at(7);
  c.witness.addToAoI(spawner); // not even by the game's hand
  step(cell, 4);
  assert.deepEqual([...c.world.entities.keys()], [rock.id]);
  assert.equal(c.witness.stats.enters, 1);
  assert.equal(c.witness.stats.creates, 1);
  assert.ok(!c.witness.has(spawner) && !c.witness.has(marker) && c.witness.aoiSize === 1);
  // The server still sees them around the player.
  const near = me.entitiesInRange(20).map((e) => e.id).sort((a, b) => a - b);
  assert.deepEqual(near, [spawner.id, marker.id, rock.id].sort((a, b) => a - b));
});

Deno.test("a witness restored where the entity it showed is another life tells the client: leave, then enter", () => {
  const cell = makeCell();
  const me = cell.createEntity("Hero", at(0));
  const other = cell.createEntity("Hero", at(10), { name: "bob", hp: 50 });
  const c = attach(me, { aoiRadius: 100, hysteresis: 0 });
  step(cell, 4);
  const seen: string[] = [];
  c.world.on("leave", (ev) => void seen.push(`leave hp=${ev.entity.props.hp}`));
  c.world.on("enter", (ev) => void seen.push(`enter hp=${ev.entity.props.hp}`));
  // The witness's state travels (an offload), and where it lands the entity is a new life with the same id.
  const state = c.witness.offloadData();
  c.witness.handOver();
  const id = other.id;
  other.destroy();
  cell.createEntity("Hero", at(12), { name: "bob", hp: 7 }, undefined, id);
  const ref: { w?: Witness } = {};
  const world = c.world;
  world.opts.send = (b) => ref.w!.receive(b);
  ref.w = Witness.restore(me, state, (f) => world.receive(f));
  step(cell, 4);
  assert.deepEqual(seen, ["leave hp=50", "enter hp=7"]);
  assert.equal(world.entities.get(id)!.props.hp, 7);
  assert.deepEqual(c.bad, []);
});

Deno.test("answers racing a leave and a new enter are stale, not bad input: the client answers enters in order", () => {
  const cell = makeCell();
  const me = cell.createEntity("Hero", at(0));
  const other = cell.createEntity("Hero", at(10), { name: "bob", hp: 50 });
  // The client's answers wait here until the test hands them over, as answers in flight do.
  const answers: Uint8Array[] = [];
  const bad: string[] = [];
  const world = new ClientWorld(registry, { send: (b) => void answers.push(b.slice()) });
  world.setPlayer(me.id, me.type);
  const witness = new Witness(
    me,
    { aoiRadius: 100, hysteresis: 0, onBadInput: (w) => void bad.push(w) },
    (f) => world.receive(f),
  );
  step(cell, 2);
  assert.equal(witness.stateOf(other), "REQUEST_PENDING");
  assert.equal(answers.length, 1);
  // It leaves and comes back before the answer arrives: the answer crosses the new cache before its enter is sent.
  other.position = at(300);
  step(cell, 2);
  assert.ok(!witness.has(other));
  other.position = at(10);
  assert.equal(witness.stateOf(other), "ENTER_PENDING");
  witness.receive(answers.shift()!);
  assert.equal(witness.stats.staleRequests, 1);
  // Out and in again: this time the old answer is taken for the new enter, and the new answer comes after it.
  step(cell, 1);
  assert.equal(witness.stateOf(other), "REQUEST_PENDING");
  other.position = at(300);
  step(cell, 2);
  other.props.hp = 51;
  other.position = at(10);
  step(cell, 1);
  assert.equal(witness.stateOf(other), "REQUEST_PENDING");
  assert.equal(answers.length, 2);
  witness.receive(answers.shift()!);
  witness.receive(answers.shift()!);
  assert.equal(witness.stats.staleRequests, 2);
  step(cell, 2);
  assert.equal(witness.stateOf(other), "CREATED");
  assert.equal(world.entities.get(other.id)!.props.hp, 51);
  assert.deepEqual(bad, []);
  // Nothing is owed any more: an answer to nothing is bad input again.
  witness.receive(new Uint8Array([48, other.id, 0, 0]));
  assert.equal(bad.length, 1);
  assert.match(bad[0], /which is CREATED/);
});

Deno.test("a client that never answers owes no more than a request timeout's worth of enters", () => {
  const cell = makeCell();
  const me = cell.createEntity("Hero", at(0));
  const other = cell.createEntity("Hero", at(10), { name: "flicker" });
  const c = attach(me, { aoiRadius: 100, hysteresis: 0, requestTimeoutMs: 500 }, false);
  // In and out of view every other tick, for 60 s of cell time: each enter is asked about, and gone before its answer.
  for (let i = 0; i < 300; i++) {
    other.position = at(10);
    step(cell, 1);
    other.position = at(300);
    step(cell, 1);
  }
  const owed = c.witness.answersOwed().length;
  assert.ok(owed > 0, "enters still within their timeout are owed");
  assert.ok(owed <= 5, `${owed} answers owed after 300 unanswered enters (500 ms of them at most)`);
  // One still owed is stale when it comes, not bad input; one past its time is an answer to nothing.
  c.witness.receive(new Uint8Array([48, other.id, 0, 0]));
  assert.equal(c.witness.stats.staleRequests, 1);
  assert.deepEqual(c.bad, []);
  step(cell, 10);
  assert.equal(c.witness.answersOwed().length, 0);
});
