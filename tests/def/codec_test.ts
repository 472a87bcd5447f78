import assert from "node:assert/strict";
import {
  ByteReader,
  ByteWriter,
  ChangeLog,
  decodeCellBackup,
  decodeChange,
  decodeClientState,
  decodeGhostState,
  decodePersistentState,
  encodeCellBackup,
  encodeChange,
  encodeGhostState,
  encodeOtherClientState,
  encodeOwnClientState,
  encodePersistentState,
  PropertyContainer,
  readChange,
  writeChange,
} from "../../core/def/mod.ts";
import { DynamicType } from "../../core/def/mod.ts";
import { AvatarProps, registry } from "../../entities/mod.ts";

const avatar = registry.get("Avatar");

function busyAvatar(log: ChangeLog): PropertyContainer<AvatarProps> {
  const c = new PropertyContainer<AvatarProps>(avatar, "cell", { sink: log, entityId: 9 });
  const v = c.view;
  v.playerName = "Ayla";
  v.hp = 42;
  v.level = 7;
  v.aiState = 3;
  v.inventory.push({ itemId: 10, count: 1, bound: false }, { itemId: 11, count: 5, bound: true });
  v.inventory[1].count = 6;
  v.inventory.splice(0, 1);
  v.inventory[0] = { itemId: 12, count: 2, bound: false };
  v.emote = "wave";
  return c;
}

Deno.test("byte writer/reader round-trip every width, varints and strings", () => {
  const w = new ByteWriter(4);
  w.i8(-5);
  w.u16(65535);
  w.i32(-123456);
  w.i64(-(2 ** 53) + 1);
  w.u64(2 ** 53 - 1);
  w.i64(-1);
  w.f32(1.5);
  w.f64(Math.PI);
  w.varint(300);
  w.varint(2 ** 40);
  w.string("héllo");
  w.string("x".repeat(200));
  const r = new ByteReader(w.bytes());
  assert.deepEqual(
    [r.i8(), r.u16(), r.i32(), r.i64(), r.u64(), r.i64(), r.f32(), r.f64(), r.varint(), r.varint(), r.string()],
    [-5, 65535, -123456, -(2 ** 53) + 1, 2 ** 53 - 1, -1, 1.5, Math.PI, 300, 2 ** 40, "héllo"],
  );
  assert.equal(r.string().length, 200);
  assert.equal(r.remaining, 0);
  assert.throws(() => r.u8(), /truncated data: need 1 byte/);
});

Deno.test("change records replay to exactly the same value, client and internal", () => {
  const log = new ChangeLog();
  const real = busyAvatar(log);
  const recs = log.drain();
  for (const space of ["internal", "client"] as const) {
    const copy = new PropertyContainer(avatar, "cell");
    const w = new ByteWriter();
    for (const r of recs) {
      const p = avatar.properties[r.index];
      if (space === "client" && p.clientIndex < 0) continue;
      writeChange(w, p, r.path, r.value, r.start, r.end, space);
    }
    const rd = new ByteReader(w.bytes());
    while (rd.remaining) copy.apply(readChange(rd, avatar, space), false);
    for (const p of avatar.propertiesFor("cell")) {
      if (space === "client" && p.clientIndex < 0) continue;
      assert.deepEqual(copy.values[p.index], real.values[p.index], `${space} ${p.name}`);
    }
  }
  // A top-level change of a small property: index+flag byte and the value.
  const hpSet = recs.find((r) => r.index === avatar.property("hp").index)!;
  assert.equal(encodeChange(avatar, hpSet).length, 1 + 4);
  const nested = recs.find((r) => r.path.length === 2)!;
  assert.deepEqual(decodeChange(avatar, encodeChange(avatar, nested)), {
    kind: "set",
    index: nested.index,
    path: [...nested.path],
    value: nested.value,
    start: -1,
    end: -1,
  });
});

Deno.test("ghost state, cell backup and persistent state round-trip", () => {
  const real = busyAvatar(new ChangeLog());
  const ghost = decodeGhostState(avatar, encodeGhostState(real), 9);
  for (const p of avatar.propertiesFor("ghost")) assert.deepEqual(ghost.values[p.index], real.values[p.index]);
  assert.equal(ghost.values[avatar.property("aiState").index], undefined, "CELL_PRIVATE never ghosted");
  assert.throws(() => (ghost.view as AvatarProps).hp = 1, /ghost entity 9/);

  const backup = decodeCellBackup(avatar, encodeCellBackup(real));
  assert.deepEqual(backup.values, real.values);

  const db = new PropertyContainer(avatar, "db");
  const skipped = decodePersistentState(encodePersistentState(real), db);
  assert.deepEqual(skipped, []);
  for (const p of avatar.propertiesFor("db")) {
    if (real.holds(p)) assert.deepEqual(db.values[p.index], real.values[p.index], p.name);
  }
});

Deno.test("own-client and other-client state; other-client state limited by detail level", () => {
  const real = busyAvatar(new ChangeLog());
  const own = new PropertyContainer(avatar, "ownClient");
  const got = decodeClientState(encodeOwnClientState(real), own).map((p) => p.name);
  assert.deepEqual(got, ["playerName", "maxHp", "level", "inventory", "counter"]);
  assert.deepEqual(own.values[avatar.property("inventory").index], real.values[avatar.property("inventory").index]);

  const names = (level: number) =>
    decodeClientState(encodeOtherClientState(real, level), new PropertyContainer(avatar, "otherClients"))
      .map((p) => p.name);
  assert.deepEqual(names(0), ["playerName", "hp", "level", "emote", "counter"], "NEAR: everything");
  assert.deepEqual(names(1), ["playerName", "level", "emote", "counter"], "FAR: no hp");
  assert.deepEqual(names(2), ["playerName", "emote", "counter"], "beyond FAR: only unlabelled properties");
});

Deno.test("decoders reject truncated or wrong data", () => {
  const real = busyAvatar(new ChangeLog());
  const bytes = encodeGhostState(real);
  assert.throws(() => decodeGhostState(avatar, bytes.subarray(0, bytes.length - 1)), /truncated data/);
  assert.throws(() => decodeChange(avatar, new Uint8Array([0xfe, 0x01])), /no client property index 127/);
});

Deno.test("a DYNAMIC value from the wire is scanned before it is decoded: hostile nesting is refused", () => {
  const t = new DynamicType("PYTHON");
  const ok = new ByteWriter();
  t.write(ok, { a: [1, 2, { b: "c" }] });
  assert.deepEqual(t.read(new ByteReader(ok.toBytes())), { a: [1, 2, { b: "c" }] });
  const deep = new ByteWriter();
  deep.blob(new Uint8Array(100_000).fill(0x91)); // [[[[...]]]] 100,000 levels deep
  assert.throws(() => t.read(new ByteReader(deep.toBytes())), /DYNAMIC value refused: .*deep/i);
});
