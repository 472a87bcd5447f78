import assert from "node:assert/strict";
import { ByteReader, ByteWriter, createRegistry, defineEntity, PropertyContainer, T } from "../../core/def/mod.ts";
import {
  AOI_MSG,
  DIR_NONE,
  DIR_Y,
  DIR_YPR,
  isAoiMessageId,
  NO_ALIAS,
  POS_FULL,
  POS_NONE,
  POS_XZ,
  readAoiMessage,
  writeCreate,
  writeDetailLevel,
  writeEnter,
  writeLeave,
  writeMethod,
  writeMethodCall,
  writeOwnProperty,
  writeProperty,
  writeReference,
  writeVolatile,
} from "../../core/proto/mod.ts";
import { encodeChange } from "../../core/def/mod.ts";
import { ClientWorld } from "../../client/world.ts";
import { makePose } from "../../core/geo/mod.ts";

const Thing = defineEntity({
  name: "Thing",
  hasCell: true,
  hasClient: true,
  volatile: { position: true, yaw: true },
  lodLevels: [{ label: "NEAR", distance: 20 }],
  properties: {
    label: { type: T.string(8), flags: "ALL_CLIENTS" },
    near: { type: T.UINT8, flags: "OTHER_CLIENTS", detailLevel: "NEAR" },
    secret: { type: T.UINT8, flags: "OWN_CLIENT" },
  },
  clientMethods: { ping: { args: [T.UINT8, T.STRING] } },
});
const registry = createRegistry({ entities: [Thing] });
const type = registry.get("Thing");

Deno.test("AOI message ids: 32-95, each message decodes to what was written", () => {
  assert.ok(isAoiMessageId(32) && isAoiMessageId(95) && !isAoiMessageId(31) && !isAoiMessageId(96));
  const sent: Uint8Array[] = [];
  const world = new ClientWorld(registry, { send: (b) => void sent.push(b) });
  assert.ok(Object.values(world.counts).every((n) => n === 0), "every kind is counted from 0");
  world.setPlayer(1, type);
  const w = new ByteWriter();
  writeReference(w, 100, 0, 200, 0.5);
  writeEnter(w, 7, 3, 11);
  writeEnter(w, 8, NO_ALIAS, 12);
  const c = new PropertyContainer(type, "otherClients");
  c.set("label", "seven");
  c.set("near", 9);
  const outer = type.propertiesFor("otherClients").filter((p) => p.detailLevel === 1);
  writeCreate(w, 7, type.id, makePose(101, 0, 201, 1, 0, 0), 1, c.values, outer, outer.length);
  writeCreate(w, 8, type.id, makePose(50, 0, 60, 0, 0, 0), 1, c.values, outer, 0);
  const near = [type.property("near")];
  writeDetailLevel(w, 3, 7, 0, c.values, near, 1);
  writeProperty(
    w,
    NO_ALIAS,
    8,
    encodeChange(type, { kind: "set", index: 0, path: [], value: "eight", start: -1, end: -1 }),
  );
  const call = new ByteWriter();
  writeMethodCall(call, type, type.method("client", "ping"), [5, "hi"]);
  writeMethod(w, 3, 7, call.toBytes());
  writeVolatile(w, 3, 7, POS_XZ, 10, 0, -20, DIR_Y, 0.5, 0, 0, 0.5);
  writeVolatile(w, NO_ALIAS, 8, POS_FULL, 1000, 2, 3000, DIR_YPR, 0.1, 0.2, 0.3, 0.5);
  writeVolatile(w, NO_ALIAS, 8, POS_NONE, 0, 0, 0, DIR_Y, -1, 0, 0, 0.5);
  writeOwnProperty(
    w,
    encodeChange(type, { kind: "set", index: type.property("secret").index, path: [], value: 4, start: -1, end: -1 }),
  );
  writeLeave(w, 7, [5, 6], 2);
  const kinds: string[] = [];
  world.on("method", (ev) => kinds.push(`method ${ev.name}(${ev.args})`));
  world.on("ownProperty", (ev) => kinds.push(`own ${ev.name}=${ev.value}`));
  world.on("leave", (ev) => kinds.push(`leave ${ev.entity.id} ${ev.stamps}`));
  world.on("detailLevel", (ev) => kinds.push(`level ${ev.level} ${ev.names}`));
  world.receive(w.toBytes());
  assert.deepEqual(kinds, ["level 0 near", "method ping(5,hi)", "own secret=4", "leave 7 5,6"]);
  assert.ok(!world.entities.has(7) && world.cache.get(7)!.stamps.length === 2);
  const e8 = world.entities.get(8)!;
  assert.equal(e8.props.label, "eight");
  assert.deepEqual([e8.position.x, e8.position.z], [1000, 3000]);
  assert.ok(Math.abs(e8.yaw + 1) < 0.02);
  // Each message counted once, under its own kind.
  assert.deepEqual(world.counts, {
    enter: 2,
    create: 2,
    leave: 1,
    property: 1,
    detailLevel: 1,
    reference: 1,
    method: 1,
    ownProperty: 1,
    ownMethod: 0,
    requestUpdate: 0,
    volatile: 3,
  });
  // The two enters were answered with (empty) requests in one frame.
  const reader = new ByteReader(sent[0]);
  const m1 = readAoiMessage(reader, reader.u8(), world);
  assert.deepEqual(m1, { kind: "requestUpdate", id: 7, life: 0, stamps: [] });
  assert.equal(world.cache.get(7)!.life, 11, "the stamps are kept with the life the enter named");
  assert.equal(sent.length, 1);
  assert.equal(AOI_MSG.requestUpdate, 48);
});

Deno.test("volatile updates are decoded in turn into one object: nothing of one carries over to the next", () => {
  const world = new ClientWorld(registry, { send: () => {} });
  world.setPlayer(1, type);
  const w = new ByteWriter();
  writeReference(w, 100, 0, 200, 0.5);
  writeEnter(w, 7, 3, 11);
  writeEnter(w, 8, NO_ALIAS, 12);
  writeCreate(w, 7, type.id, makePose(101, 0, 201, 1, 0, 0), 1, [], [], 0);
  writeCreate(w, 8, type.id, makePose(50, 0, 60, 0, 0, 0), 1, [], [], 0);
  // Every field of the first update set; the second names its entity by alias, moves it on x/z only and turns it not.
  writeVolatile(w, NO_ALIAS, 8, POS_FULL, 1000, 2, 3000, DIR_YPR, 0.1, 0.2, 0.3, 0.5);
  writeVolatile(w, 3, 7, POS_XZ, 10, 0, -20, DIR_NONE, 0, 0, 0, 0.5);
  const moves: string[] = [];
  world.on("move", (ev) => moves.push(`${ev.entity.id} full=${ev.full} byAlias=${ev.byAlias}`));
  world.receive(w.toBytes());
  assert.deepEqual(moves, ["8 full=true byAlias=false", "7 full=false byAlias=true"]);
  const e7 = world.entities.get(7)!, e8 = world.entities.get(8)!;
  assert.deepEqual([e7.position.x, e7.position.y, e7.position.z], [110, 0, 180]);
  assert.deepEqual([e7.yaw, e7.pitch, e7.roll], [1, 0, 0], "no direction sent: the one it had");
  assert.deepEqual([e8.position.x, e8.position.y, e8.position.z], [1000, 2, 3000]);
  assert.ok(Math.abs(e8.pitch - 0.2) < 0.02 && Math.abs(e8.roll - 0.3) < 0.02);
  // Decoded one by one, each is a message of its own.
  const r = new ByteReader(w.toBytes());
  const decoded = [];
  while (r.remaining > 0) decoded.push(readAoiMessage(r, r.u8(), world));
  const [full, packed] = decoded.filter((m) => m.kind === "volatile");
  assert.notEqual(full, packed);
  assert.deepEqual([full.id, full.y, packed.id, packed.y, Number.isNaN(packed.yaw)], [8, 2, 7, 0, true]);
});

Deno.test("a world that keeps no moves answers enters, steps over volatile updates and decodes what follows", () => {
  const sent: Uint8Array[] = [];
  const world = new ClientWorld(registry, { send: (b) => void sent.push(b), moves: false });
  world.setPlayer(1, type);
  const w = new ByteWriter();
  writeReference(w, 100, 0, 200, 0.5);
  writeEnter(w, 7, 3, 11);
  writeCreate(w, 7, type.id, makePose(101, 0, 201, 1, 0, 0), 1, [], [], 0);
  writeVolatile(w, 3, 7, POS_XZ, 10, 0, -20, DIR_Y, 0.5, 0, 0, 0.5);
  writeVolatile(w, NO_ALIAS, 7, POS_FULL, 1000, 2, 3000, DIR_YPR, 0.1, 0.2, 0.3, 0.5);
  writeProperty(
    w,
    3,
    7,
    encodeChange(type, { kind: "set", index: 0, path: [], value: "seven", start: -1, end: -1 }),
  );
  writeLeave(w, 7, [5], 1);
  const seen: string[] = [];
  world.on("move", (ev) => seen.push(`move ${ev.entity.id}`));
  world.on("property", (ev) => seen.push(`property ${ev.name}=${ev.value}`));
  world.on("leave", (ev) => seen.push(`leave ${ev.entity.id} at ${ev.entity.position.x},${ev.entity.position.z}`));
  world.receive(w.toBytes());
  assert.deepEqual(seen, ["property label=seven", "leave 7 at 101,201"], "no moves, and the pose it entered with");
  assert.equal(world.counts.volatile, 2);
  // The enter was answered, as a player's client answers it.
  const r = new ByteReader(sent[0]);
  assert.deepEqual(readAoiMessage(r, r.u8(), world), { kind: "requestUpdate", id: 7, life: 0, stamps: [] });
});

Deno.test("the client cache answers a re-entry with its stamps and reuses the cached properties", () => {
  const sent: Uint8Array[] = [];
  const world = new ClientWorld(registry, { send: (b) => void sent.push(b) });
  const w = new ByteWriter();
  const c = new PropertyContainer(type, "otherClients");
  c.set("label", "x");
  const all = type.propertiesFor("otherClients").filter((p) => p.detailLevel === 1);
  writeEnter(w, 5, 0, 9);
  writeCreate(w, 5, type.id, makePose(0, 0, 0, 0, 0, 0), 1, c.values, all, all.length);
  writeLeave(w, 5, [3, 4], 2);
  writeEnter(w, 5, 1, 9);
  world.receive(w.toBytes());
  const last = sent[sent.length - 1];
  // One frame: the first (empty) request, then the re-entry with the life and stamps the leave gave.
  assert.deepEqual([...last], [AOI_MSG.requestUpdate, 5, 0, 0, AOI_MSG.requestUpdate, 5, 9, 2, 3, 4]);
  const w2 = new ByteWriter();
  writeCreate(w2, 5, type.id, makePose(0, 0, 0, 0, 0, 0), 1, c.values, all, 0);
  let fromCache = false;
  world.on("enter", (ev) => fromCache = ev.fromCache);
  world.receive(w2.toBytes());
  assert.ok(fromCache);
  assert.equal(world.entities.get(5)!.props.label, "x");
  assert.throws(() => world.receive(new Uint8Array([5])), /not an AOI message/);
});

Deno.test("a cached copy of another life of the entity is dropped, not offered: the server sends it whole", () => {
  const sent: Uint8Array[] = [];
  const world = new ClientWorld(registry, { send: (b) => void sent.push(b) });
  const w = new ByteWriter();
  const c = new PropertyContainer(type, "otherClients");
  c.set("label", "old");
  const all = type.propertiesFor("otherClients").filter((p) => p.detailLevel === 1);
  writeEnter(w, 5, 0, 9);
  writeCreate(w, 5, type.id, makePose(0, 0, 0, 0, 0, 0), 1, c.values, all, all.length);
  writeLeave(w, 5, [3, 4], 2);
  // The entity was made again (a relog): its numbering restarted under another life.
  writeEnter(w, 5, 1, 10);
  world.receive(w.toBytes());
  const last = sent[sent.length - 1];
  assert.deepEqual([...last].slice(-4), [AOI_MSG.requestUpdate, 5, 0, 0], "no stamps of the old life");
  assert.ok(!world.cache.has(5));
  const c2 = new PropertyContainer(type, "otherClients");
  c2.set("label", "new");
  const w2 = new ByteWriter();
  writeCreate(w2, 5, type.id, makePose(0, 0, 0, 0, 0, 0), 1, c2.values, all, all.length);
  let fromCache = true;
  world.on("enter", (ev) => fromCache = ev.fromCache);
  world.receive(w2.toBytes());
  assert.ok(!fromCache);
  assert.equal(world.entities.get(5)!.props.label, "new");
  assert.equal(world.entities.get(5)!.life, 10);
});
