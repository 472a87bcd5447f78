import assert from "node:assert/strict";
import { AUD } from "../../core/def/mod.ts";
import { registry } from "../../entities/mod.ts";

Deno.test("sample types: ids, parts and the properties other code relies on", () => {
  assert.deepEqual(registry.types.map((t) => [t.id, t.name]), [
    [0, "Account"],
    [1, "Avatar"],
    [2, "NPC"],
    [3, "Guild"],
    [4, "Dungeon"],
  ]);
  const account = registry.get("Account");
  assert.equal(account.proxy, true);
  assert.equal(account.hasCell, false);
  assert.deepEqual(account.property("name").audiences, ["base", "ownClient", "db"]);
  assert.ok(account.findMethod("client", "chatMessage"));

  const avatar = registry.get("Avatar");
  assert.equal(avatar.proxy && avatar.hasCell && avatar.hasBase, true);
  assert.deepEqual(avatar.property("playerName").audiences, ["cell", "ghost", "ownClient", "otherClients", "db"]);
  assert.equal(avatar.property("hp").flags, "OTHER_CLIENTS");
  assert.equal(avatar.property("hp").detailLabel, "NEAR");
  assert.equal(avatar.property("inventory").flags, "OWN_CLIENT");
  assert.equal(avatar.property("inventory").persistent, true);
  assert.match(avatar.property("inventory").type.name, /^ARRAY<FIXED_DICT/);
  assert.equal(avatar.property("aiState").mask, AUD.cell);
  assert.equal(avatar.method("cell", "useItem").exposed, true);
  assert.equal(avatar.method("client", "onEmote").detailDistance, 40);

  const npc = registry.get("NPC");
  assert.equal(npc.hasBase, false);
  assert.equal(npc.property("name").flags, "ALL_CLIENTS");
  assert.equal(npc.property("mood").flags, "OTHER_CLIENTS");
  assert.equal(npc.property("mood").detailLabel, "FAR");
  assert.deepEqual(npc.volatile, { position: true, yaw: true });

  const guild = registry.get("Guild");
  assert.equal(guild.hasBase && !guild.hasCell && !guild.proxy && !guild.hasClient, true);
  assert.equal(guild.property("members").persistent, true);
});

Deno.test("lookups by name and index are consistent", () => {
  for (const t of registry.types) {
    assert.equal(registry.byId(t.id), t);
    t.properties.forEach((p, i) => {
      assert.equal(p.index, i);
      assert.equal(t.property(p.name), p);
      if (p.clientIndex >= 0) assert.equal(t.clientProperties[p.clientIndex], p);
    });
    for (const kind of ["cell", "base", "client"] as const) {
      t.methods(kind).forEach((m, i) => {
        assert.equal(m.index, i);
        assert.equal(t.method(kind, m.name), m);
      });
    }
  }
  assert.throws(
    () => registry.get("Dragon"),
    /unknown entity type 'Dragon' \(known: Account, Avatar, NPC, Guild, Dungeon\)/,
  );
});
