/** The mark of the highest entity id a baseapp's database holds, which it reports to the cellappmgr. */
import { openDenoKv } from "../../core/db/mod.ts";
import assert from "node:assert/strict";
import { Accounts, EntityStore } from "../../base/mod.ts";
import { HELD_IDS_KEY, heldIdHighWater } from "../../base/persist/held_ids.ts";

const saved = {
  type: "Avatar",
  base: new Uint8Array(),
  cell: new Uint8Array(),
  position: [0, 0, 0] as [number, number, number],
  direction: [0, 0, 0] as [number, number, number],
  spaceId: 1,
};

Deno.test("every account made and every entity saved raises the mark in the same commit", async () => {
  await using kv = await openDenoKv(":memory:");
  assert.equal(await heldIdHighWater(kv), 0, "an empty database holds none");
  let next = 40;
  const accounts = new Accounts(kv, {
    entityType: "Avatar",
    iterations: 1000,
    newEntityId: () => Promise.resolve(next),
  });
  assert.ok((await accounts.login({ name: "ann", password: "pw", remote: "test" })).ok);
  assert.equal(await heldIdHighWater(kv), 40);
  next = 7;
  assert.ok((await accounts.login({ name: "bob", password: "pw", remote: "test" })).ok);
  assert.equal(await heldIdHighWater(kv), 40, "a lower id leaves it");
  await new EntityStore(kv).save(90, saved);
  assert.equal(await heldIdHighWater(kv), 90);
});

Deno.test("a database written before the mark existed gets it once, from its accounts", async () => {
  await using kv = await openDenoKv(":memory:");
  const accounts = new Accounts(kv, {
    entityType: "Avatar",
    iterations: 1000,
    newEntityId: () => Promise.resolve(123),
  });
  assert.ok((await accounts.login({ name: "old", password: "pw", remote: "test" })).ok);
  await kv.delete(HELD_IDS_KEY);
  assert.equal(await heldIdHighWater(kv), 123);
  assert.equal((await kv.get<bigint>(HELD_IDS_KEY)).value, 123n, "and keeps it");
});
