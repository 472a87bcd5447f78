import assert from "node:assert/strict";
import {
  Audience,
  AUDIENCES,
  audiencesOf,
  createRegistry,
  decodeClientState,
  decodeGhostState,
  decodePersistentState,
  encodeCellBackup,
  encodeGhostState,
  encodeOtherClientState,
  encodeOwnClientState,
  encodePersistentState,
  Flag,
  FLAGS,
  parseFlag,
  PropertyContainer,
  T,
} from "../../core/def/mod.ts";

// BigWorld's table, as the issue gives it.
const TABLE: Record<Flag, Audience[]> = {
  BASE: ["base"],
  BASE_AND_CLIENT: ["base", "ownClient"],
  CELL_PRIVATE: ["cell"],
  CELL_PUBLIC: ["cell", "ghost"],
  CELL_PUBLIC_AND_OWN: ["cell", "ghost", "ownClient"],
  OWN_CLIENT: ["cell", "ownClient"],
  OTHER_CLIENTS: ["cell", "ghost", "otherClients"],
  ALL_CLIENTS: ["cell", "ghost", "ownClient", "otherClients"],
};

Deno.test("every flag routes to exactly its audiences, plus db when persistent", () => {
  for (const flag of FLAGS) {
    assert.deepEqual(audiencesOf(flag, false), TABLE[flag], flag);
    assert.deepEqual(audiencesOf(flag, true), [...TABLE[flag], "db"], flag);
  }
});

Deno.test("whatever other clients see is ghosted; CELL_PRIVATE never leaves the real", () => {
  for (const flag of FLAGS) {
    const a = audiencesOf(flag, false);
    if (a.includes("otherClients")) assert.ok(a.includes("ghost"), flag);
  }
  assert.deepEqual(audiencesOf("CELL_PRIVATE", false), ["cell"]);
});

Deno.test("older flag spellings", () => {
  assert.equal(parseFlag("OTHER_CLIENT"), "OTHER_CLIENTS");
  assert.equal(parseFlag("ALL_CLIENT"), "ALL_CLIENTS");
  assert.equal(parseFlag(" PRIVATE "), "CELL_PRIVATE");
  assert.equal(parseFlag("cell_public"), "CELL_PUBLIC");
  assert.equal(parseFlag("EVERYONE"), undefined);
});

// One persistent property per flag; every encoder must carry exactly the flags that reach its audience.
const reg = createRegistry({
  entities: [{
    name: "Probe",
    properties: Object.fromEntries(
      FLAGS.map((f, i) => [f.toLowerCase(), { type: T.INT32, flags: f, default: i + 1, persistent: true }]),
    ),
  }],
});
const probe = reg.get("Probe");
const holders = (a: Audience) => FLAGS.filter((f) => TABLE[f].includes(a) || a === "db");

Deno.test("each audience's property list matches the table, for every flag", () => {
  for (const a of AUDIENCES) {
    assert.deepEqual(
      probe.propertiesFor(a).map((p) => p.flags),
      holders(a),
      a,
    );
  }
});

Deno.test("encoders carry exactly their audience's properties", () => {
  const cell = new PropertyContainer(probe, "cell");
  const base = new PropertyContainer(probe, "base");
  const names = (c: PropertyContainer) =>
    probe.properties.filter((p) => c.values[p.index] !== undefined).map((p) => p.flags);

  const ghost = decodeGhostState(probe, encodeGhostState(cell));
  assert.deepEqual(names(ghost), holders("ghost"));
  assert.equal(ghost.readOnly, true);

  const own = new PropertyContainer(probe, "ownClient");
  own.values.fill(undefined);
  decodeClientState(encodeOwnClientState(cell), own);
  decodeClientState(encodeOwnClientState(base), own);
  assert.deepEqual(names(own), holders("ownClient"));

  const other = new PropertyContainer(probe, "otherClients");
  other.values.fill(undefined);
  decodeClientState(encodeOtherClientState(cell), other);
  decodeClientState(encodeOtherClientState(base), other);
  assert.deepEqual(names(other), holders("otherClients"));

  const db = new PropertyContainer(probe, "db");
  db.values.fill(undefined);
  decodePersistentState(encodePersistentState(cell), db);
  decodePersistentState(encodePersistentState(base), db);
  assert.deepEqual(names(db), FLAGS.slice());

  assert.ok(encodeCellBackup(cell).length === 4 * holders("cell").length);
  for (const c of [ghost, own, other, db]) {
    for (const p of probe.properties) {
      if (c.values[p.index] !== undefined) assert.equal(c.values[p.index], p.default);
    }
  }
});
