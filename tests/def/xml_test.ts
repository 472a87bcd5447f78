import assert from "node:assert/strict";
import { DefError, describeRegistry, EntityRegistry, formatWarning, loadDefs } from "../../core/def/mod.ts";
import { userTypes } from "./fixtures/seeds/user_types.ts";

const FIX = new URL("./fixtures/", import.meta.url).pathname;
const CORPUS = new URL("../../../shared/corpus/kbengine_demos_assets", import.meta.url).pathname;
/** The corpus lives beside the repository, in the workspace's shared folder; a bare clone has none. */
const HAS_CORPUS = (() => {
  try {
    return Deno.statSync(`${CORPUS}/entities.xml`).isFile;
  } catch {
    console.log(`skipping the KBEngine corpus tests: ${CORPUS} is not there (a clone without ../shared)`);
    return false;
  }
})();

function audiences(reg: EntityRegistry, type: string): Record<string, string[]> {
  return Object.fromEntries(reg.get(type).properties.map((p) => [p.name, [...p.audiences]]));
}

Deno.test("Account.def and ClientAvatar.def (fixtures/seeds) give each property the audiences its flags mean", async () => {
  const reg = await loadDefs(`${FIX}seeds`, { userTypes });
  assert.deepEqual(audiences(reg, "Account"), {
    playerName: ["base", "ownClient", "db"],
    character: ["base", "db"],
  });
  assert.deepEqual(reg.get("Account").clientMethods.map((m) => [m.name, m.args.map((a) => a.type.name)]), [
    ["chatMessage", ["STRING"]],
  ]);
  const ca = reg.get("ClientAvatar");
  assert.deepEqual(audiences(reg, "ClientAvatar"), {
    playerName: ["cell", "ghost", "ownClient", "otherClients", "db"],
    prop1: ["base", "ownClient"],
    prop2: ["cell", "ghost", "ownClient", "otherClients", "db"],
    prop3: ["cell", "ghost", "otherClients"],
    prop4: ["cell"],
    prop5: ["cell", "ghost", "ownClient", "otherClients", "db"],
    _timer1: ["cell"],
    _timer2: ["cell"],
    _timerTick: ["cell"],
  });
  assert.deepEqual(ca.volatile, { position: true, yaw: true, pitch: 20 });
  assert.equal(ca.property("prop3").default, 3);
  assert.equal(ca.property("playerName").identifier, true);
  assert.equal(ca.property("prop5").type.name, "USER<TestDataType>");
  assert.deepEqual((ca.property("prop5").default as { intValue: number }).intValue, 100);
});

Deno.test("Seat.def (fixtures/seeds): older spellings, LoD levels, DetailLevel, DetailDistance, Exposed", async () => {
  const reg = await loadDefs(`${FIX}seeds`, { userTypes });
  const seat = reg.get("Seat");
  assert.deepEqual(audiences(reg, "Seat"), {
    seatType: ["cell", "ghost", "otherClients"],
    ownerID: ["cell", "ghost", "otherClients"],
    channel: ["cell"],
  });
  assert.deepEqual(seat.lodLevels, [
    { label: "NEAR", distance: 20, hysteresis: 4 },
    { label: "MEDIUM", distance: 100, hysteresis: 10 },
    { label: "FAR", distance: 250, hysteresis: 20 },
  ]);
  assert.equal(seat.property("seatType").detailLevel, 0);
  assert.equal(seat.property("seatType").detailLabel, "NEAR");
  assert.equal(seat.property("seatType").default, -1);
  assert.equal(seat.property("ownerID").detailLevel, 3);
  assert.equal(seat.method("client", "clientMethod1").detailDistance, 30);
  assert.deepEqual(seat.cellMethods.map((m) => [m.name, m.exposed, m.args.map((a) => a.type.name)]), [
    ["sitDownRequest", true, ["ENTITY_ID"]],
    ["getUpRequest", true, ["ENTITY_ID"]],
    ["ownerNotSeated", false, []],
    ["tableChat", false, ["STRING"]],
  ]);
  assert.equal(seat.detailLevelAt(15), 0);
  assert.equal(seat.detailLevelAt(90), 1);
  assert.equal(seat.detailLevelAt(1000), 3);
  assert.equal(seat.updateDetailLevel(0, 22), 0, "hysteresis keeps NEAR until 24 m");
  assert.equal(seat.updateDetailLevel(0, 25), 1);
  assert.equal(seat.updateDetailLevel(1, 21), 1, "NEAR is entered within its 20 m");
  assert.equal(seat.updateDetailLevel(1, 17), 0, "within 20 m: NEAR again, though inside the hysteresis band");
  assert.equal(seat.updateDetailLevel(3, 10), 0);
});

Deno.test({
  name: "the KBEngine demo corpus loads all nine types, interface and component members included",
  ignore: !HAS_CORPUS,
}, async () => {
  const reg = await loadDefs(CORPUS);
  assert.deepEqual(reg.types.map((t) => t.name), [
    "Account",
    "Avatar",
    "Monster",
    "NPC",
    "Gate",
    "Spaces",
    "Space",
    "SpaceDuplicate",
    "SpawnPoint",
  ]);
  const avatar = reg.get("Avatar");
  for (const n of ["name", "HP", "MP_Max", "skills", "spaceUType", "moveSpeed", "level", "component1.state"]) {
    assert.ok(avatar.findProperty(n), n);
  }
  assert.equal(avatar.property("HP").declaredIn, "CombatPropertys");
  assert.equal(avatar.property("component2.state").persistent, false, "component2 is not persistent");
  assert.equal(avatar.property("component1.state").persistent, true);
  assert.ok(avatar.findMethod("base", "component1.say"));
  assert.equal(avatar.property("name").type.name, "STRING", "UNICODE maps to STRING");
  assert.equal(reg.get("Account").property("activeCharacter").type.name, "ENTITY_ID", "ENTITYCALL");
  assert.equal(reg.get("Space").property("context").type.name, "DYNAMIC", "PYTHON");
  assert.equal(reg.get("SpaceDuplicate").parent?.name, "Space");
  assert.match(reg.get("Account").property("characters").type.name, /^FIXED_DICT\{values: ARRAY<FIXED_DICT/);
  assert.deepEqual(avatar.volatile, { position: true, yaw: true, pitch: true, roll: true, optimized: true });
  assert.equal(avatar.property("level").metadata.Utype, "41002");
  const text = reg.warnings.map(formatWarning).join("\n");
  for (
    const needle of [
      /Avatar\.def:\d+: Avatar\.level: <Utype>/,
      /types\.xml:\d+: AVATAR_INFOS\.name: <DatabaseLength>/,
      /implementedBy 'AVATAR_INFOS\.avatar_info_inst'/,
      /GameObject\.def:\d+: Avatar\.name: DetailLevel 'MEDIUM' ignored: Avatar has no LoDLevels/,
      /PY_DICT is dynamically typed/,
      /<optimized>/,
      /alias BOOL redefines a built-in type/,
    ]
  ) assert.match(text, needle);
  // The JSON description is plain data.
  const json = JSON.parse(JSON.stringify(describeRegistry(reg)));
  assert.equal(json.types.length, 9);
});

Deno.test("a definition set that uses every feature", async () => {
  const reg = await loadDefs(`${FIX}features`);
  const hero = reg.get("Hero");
  assert.equal(hero.parent?.name, "Creature");
  assert.deepEqual(hero.interfaces, ["Named", "Social"]);
  assert.deepEqual(hero.properties.slice(0, 4).map((p) => p.name), ["title", "health", "stance", "brain"]);
  assert.equal(hero.property("health").detailLabel, "MEDIUM");
  assert.equal(hero.property("health").detailLevel, 1);
  assert.equal(hero.property("stance").sendLatestOnly, true);
  assert.equal(hero.property("brain").type.name, "FLOAT32");
  assert.deepEqual(hero.property("bag").default, [{ id: 7, count: 2, tags: ["new"] }]);
  assert.deepEqual(hero.property("grid").default, [[1, 2], [3]]);
  assert.deepEqual(hero.property("home").default, { x: 1, y: 2, z: 3 });
  assert.deepEqual(hero.property("spot").default, { x: 4, y: 5 });
  assert.deepEqual(hero.property("secret").default, new Uint8Array([1, 2, 3]));
  assert.deepEqual(hero.property("stats").default, { str: 10, dex: 0 });
  assert.equal(hero.property("luck").default, -9007199254740991);
  assert.equal(hero.property("pack.slots").component, "pack");
  assert.deepEqual(hero.findMethod("cell", "hurt")?.args.map((a) => a.type.name), ["INT32", "ENTITY_ID"]);
  assert.equal(hero.findMethod("client", "growl")?.detailDistance, 25);
  assert.equal(hero.findMethod("base", "befriend")?.exposed, true);
  assert.equal(hero.hasClient, true);
  assert.equal(reg.get("Spawner").hasClient, false);
  assert.deepEqual(reg.get("Creature").volatile, { position: true, yaw: true, pitch: 30, roll: 10 });
  assert.deepEqual(reg.types.map((t) => t.id), [0, 1, 2]);
  assert.equal(hero.metadata.spawnable, "yes");
});

// Bad input: every case fails with file, line, entity and property/method named.
const ENTITY = (body: string) => `<root>\n${body}\n</root>`;
const PROP = (name: string, inner: string) => `<Properties>\n<${name}>\n${inner}\n</${name}>\n</Properties>`;

async function loadVirtual(files: Record<string, string>): Promise<EntityRegistry> {
  return await loadDefs("v", { readText: (p) => Promise.resolve(files[p]) });
}

async function expectError(
  defs: Record<string, string>,
  file: string,
  line: number,
  entity: string,
  member: string | undefined,
  reason: RegExp,
): Promise<void> {
  const names = Object.keys(defs).filter((k) => !k.includes("/")).map((k) => k.replace(".def", ""));
  const files: Record<string, string> = { "v/entities.xml": `<root>${names.map((n) => `<${n}/>`).join("")}</root>` };
  for (const [k, v] of Object.entries(defs)) files[`v/entity_defs/${k}`] = v;
  await assert.rejects(loadVirtual(files), (e: unknown) => {
    assert.ok(e instanceof DefError, String(e));
    assert.equal(e.source?.file, `v/entity_defs/${file}`, e.message);
    assert.equal(e.source?.line, line, e.message);
    assert.equal(e.entity, entity, e.message);
    assert.equal(e.member, member, e.message);
    assert.match(e.reason, reason);
    assert.ok(e.message.startsWith(`v/entity_defs/${file}:${line}: `), e.message);
    return true;
  });
}

Deno.test("bad input: malformed XML", async () => {
  await expectError(
    { "A.def": "<root>\n<Properties>\n</Propertes>\n</root>" },
    "A.def",
    3,
    undefined!,
    undefined,
    /malformed XML/,
  );
});

Deno.test("bad input: unknown type", async () => {
  await expectError(
    { "A.def": ENTITY(PROP("hp", "<Type> INTEGER </Type>\n<Flags> CELL_PUBLIC </Flags>")) },
    "A.def",
    4,
    "A",
    "hp",
    /unknown type 'INTEGER'/,
  );
});

Deno.test("bad input: unknown flag", async () => {
  await expectError(
    { "A.def": ENTITY(PROP("hp", "<Type> INT8 </Type>\n<Flags> CELL_PUBLICK </Flags>")) },
    "A.def",
    5,
    "A",
    "hp",
    /unknown flag 'CELL_PUBLICK'/,
  );
});

Deno.test("bad input: duplicate property (same file, and through an interface)", async () => {
  const p = "<Type> INT8 </Type>\n<Flags> BASE </Flags>";
  await expectError(
    { "A.def": `<root>\n<Properties>\n<hp>${p}</hp>\n<hp>${p}</hp>\n</Properties>\n</root>` },
    "A.def",
    5,
    "A",
    "hp",
    /duplicate property 'hp'/,
  );
  await expectError(
    {
      "A.def": `<root>\n<Interfaces><Interface>I</Interface></Interfaces>\n${PROP("hp", p)}\n</root>`,
      "interfaces/I.def": ENTITY(PROP("hp", p)),
    },
    "A.def",
    4,
    "A",
    "hp",
    /duplicate property 'hp' \(already defined in I at v\/entity_defs\/interfaces\/I\.def:3\)/,
  );
});

Deno.test("bad input: a default that does not fit its type", async () => {
  await expectError(
    { "A.def": ENTITY(PROP("hp", "<Type> UINT8 </Type>\n<Flags> BASE </Flags>\n<Default> 300 </Default>")) },
    "A.def",
    6,
    "A",
    "hp",
    /default does not fit UINT8: 300 is out of range/,
  );
  await expectError(
    { "A.def": ENTITY(PROP("hp", "<Type> INT8 </Type>\n<Flags> BASE </Flags>\n<Default> lots </Default>")) },
    "A.def",
    6,
    "A",
    "hp",
    /default 'lots' does not fit INT8/,
  );
});

Deno.test("bad input: a method argument of unknown type", async () => {
  await expectError(
    { "A.def": ENTITY("<CellMethods>\n<hit>\n<Arg> INT32 </Arg>\n<Arg> WEAPON </Arg>\n</hit>\n</CellMethods>") },
    "A.def",
    5,
    "A",
    "hit",
    /argument 2: unknown type 'WEAPON'/,
  );
});

Deno.test("bad input: a parent that does not exist, and a cycle of parents", async () => {
  await expectError(
    { "A.def": ENTITY("<Parent> Ghost </Parent>") },
    "A.def",
    2,
    "A",
    undefined,
    /parent 'Ghost' does not exist/,
  );
  await expectError(
    { "A.def": ENTITY("<Parent> B </Parent>"), "B.def": ENTITY("\n<Parent> A </Parent>") },
    "B.def",
    3,
    "B",
    undefined,
    /cycle of parents: A -> B -> A/,
  );
});

Deno.test("bad input: USER_TYPE with no registered user type", async () => {
  await expectError(
    {
      "A.def": ENTITY(PROP(
        "p5",
        "<Type> USER_TYPE <implementedBy> TestDataType.instance </implementedBy> </Type>\n<Flags> ALL_CLIENTS </Flags>",
      )),
    },
    "A.def",
    4,
    "A",
    "p5",
    /USER_TYPE implemented by 'TestDataType\.instance' has no registered user type/,
  );
});

Deno.test("bad input: unknown DetailLevel label, missing interface", async () => {
  await expectError(
    {
      "A.def": ENTITY(
        "<LoDLevels><level> 20 <label> NEAR </label></level></LoDLevels>\n" +
          PROP("x", "<Type> INT8 </Type>\n<Flags> OTHER_CLIENTS </Flags>\n<DetailLevel> FAR </DetailLevel>"),
      ),
    },
    "A.def",
    4,
    "A",
    "x",
    /unknown DetailLevel 'FAR' \(LoD labels: NEAR\)/,
  );
  await expectError(
    { "A.def": ENTITY("<Interfaces>\n<Interface> Nope </Interface>\n</Interfaces>") },
    "A.def",
    1,
    "A",
    undefined,
    /interface 'Nope' does not exist/,
  );
});

Deno.test("KBEngine's layout in our own fixture: flat entities.xml with part attributes, interfaces, components", async () => {
  const reg = await loadDefs(`${FIX}kbengine_style`);
  assert.deepEqual(
    reg.types.map((t) => [t.name, t.hasBase, t.hasCell, t.hasClient]),
    [
      ["Player", true, true, true],
      ["Guard", false, true, true],
      ["Beacon", false, true, false],
      ["Dungeon", true, false, false],
      ["DungeonCopy", true, false, false],
    ],
  );
  const player = reg.get("Player");
  assert.equal(player.property("HP").declaredIn, "Living");
  assert.ok(player.findMethod("cell", "heal"));
  assert.equal(player.property("pouch.coins").persistent, true);
  assert.equal(player.property("spare.coins").persistent, false, "a component can be declared not persistent");
  assert.ok(player.findMethod("base", "pouch.count"));
  assert.equal(player.property("name").type.name, "STRING", "UNICODE maps to STRING");
  assert.equal(player.property("friend").type.name, "ENTITY_ID", "ENTITYCALL");
  assert.equal(player.property("extra").type.name, "DYNAMIC", "PY_DICT");
  assert.equal(reg.get("Dungeon").property("context").type.name, "DYNAMIC", "PYTHON");
  assert.equal(reg.get("DungeonCopy").parent?.name, "Dungeon");
  assert.match(player.property("roster").type.name, /^FIXED_DICT\{values: ARRAY<FIXED_DICT\{dbid: UINT64/);
  assert.deepEqual(player.volatile, { position: true, yaw: true, pitch: true, roll: true, optimized: true });
  assert.equal(player.property("tag").metadata.Utype, "41003");
  const text = reg.warnings.map(formatWarning).join("\n");
  for (
    const needle of [
      /Living\.def:\d+: Living\.tag: <Utype>/,
      /types\.xml:\d+: PLAYER_INFO\.name: <DatabaseLength>/,
      /implementedBy 'PLAYER_INFO\.inst'/,
      /Living\.def:\d+: Player\.HP: DetailLevel 'MEDIUM' ignored: Player has no LoDLevels/,
      /PY_DICT is dynamically typed/,
      /<optimized>/,
      /alias BOOL redefines a built-in type/,
    ]
  ) assert.match(text, needle);
  assert.equal(JSON.parse(JSON.stringify(describeRegistry(reg))).types.length, 5);
});
