import assert from "node:assert/strict";
import { Accounts, constantTimeEqual, EntityStore, hashPassword } from "../../base/mod.ts";
import { CHUNK } from "../../base/storage.ts";

function accounts(kv: Deno.Kv, opts: Partial<ConstructorParameters<typeof Accounts>[1]> = {}): Accounts {
  let next = 500;
  return new Accounts(kv, {
    entityType: "Avatar",
    iterations: 1000,
    newEntityId: () => Promise.resolve(next++),
    ...opts,
  });
}
const remote = "127.0.0.1:1";

Deno.test("passwords are stored as salted PBKDF2-SHA256 hashes and compared in constant time", async () => {
  using kv = await Deno.openKv(":memory:");
  const a = accounts(kv);
  const first = await a.login({ name: "alice", password: "s3cret", remote });
  assert.deepEqual(first, { ok: true, entityId: 500, type: "Avatar", created: true });
  const rec = (await a.get("alice"))!;
  assert.equal(rec.salt.length, 16);
  assert.equal(rec.hash.length, 32);
  assert.equal(rec.iterations, 1000);
  assert.ok(!new TextDecoder().decode(rec.hash).includes("s3cret"));
  assert.deepEqual(rec.hash, await hashPassword("s3cret", rec.salt, 1000));
  // The same password with another salt hashes differently.
  assert.notDeepEqual(rec.hash, await hashPassword("s3cret", new Uint8Array(16), 1000));

  assert.deepEqual(await a.login({ name: "alice", password: "s3cret", remote }), {
    ok: true,
    entityId: 500,
    type: "Avatar",
    created: false,
  });
  assert.deepEqual(await a.login({ name: "alice", password: "wrong", remote }), {
    ok: false,
    reason: "wrong password",
  });

  assert.ok(constantTimeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 2])));
  assert.ok(!constantTimeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 3])));
  assert.ok(!constantTimeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 2, 0])));
});

Deno.test("accounts: creation can be forbidden, a custom check runs first, names and passwords are bounded", async () => {
  using kv = await Deno.openKv(":memory:");
  const closed = accounts(kv, { autoCreate: false });
  const r = await closed.login({ name: "bob", password: "pw", remote });
  assert.equal(r.ok, false);
  assert.match((r as { reason: string }).reason, /no account "bob"/);

  const seen: string[] = [];
  const checked = accounts(kv, {
    check: ({ name, remote }) => {
      seen.push(`${name}@${remote}`);
      return name.startsWith("banned") ? "this account is banned" : null;
    },
  });
  assert.deepEqual(await checked.login({ name: "banned1", password: "pw", remote }), {
    ok: false,
    reason: "this account is banned",
  });
  assert.equal(await checked.get("banned1"), null, "a refused login creates nothing");
  assert.equal((await checked.login({ name: "carol", password: "pw", remote })).ok, true);
  assert.deepEqual(seen, ["banned1@127.0.0.1:1", "carol@127.0.0.1:1"]);

  for (const name of ["", "a b", "x".repeat(65), "semi;colon"]) {
    assert.equal((await checked.login({ name, password: "pw", remote })).ok, false, JSON.stringify(name));
  }
  assert.equal((await checked.login({ name: "dave", password: "", remote })).ok, false);
  assert.equal((await checked.login({ name: "dave", password: "p".repeat(257), remote })).ok, false);
});

Deno.test("two first logins of one account at once create it once", async () => {
  using kv = await Deno.openKv(":memory:");
  const a = accounts(kv);
  const [x, y] = await Promise.all([
    a.login({ name: "eve", password: "pw", remote }),
    a.login({ name: "eve", password: "pw", remote }),
  ]);
  assert.ok(x.ok && y.ok);
  assert.equal(x.entityId, y.entityId);
  assert.equal([x.created, y.created].filter(Boolean).length, 1);
});

Deno.test("entity state round-trips through KV in one commit, in chunks, and shrinking drops old chunks", async () => {
  using kv = await Deno.openKv(":memory:");
  const store = new EntityStore(kv);
  assert.equal(await store.load(7), null);
  const big = new Uint8Array(CHUNK * 2 + 5).map((_, i) => i % 251);
  const e = {
    type: "Avatar",
    base: new Uint8Array([1, 2, 3]),
    cell: big,
    position: [1, 2, 3] as [number, number, number],
    direction: [0.5, 0, 0] as [number, number, number],
    spaceId: 4,
  };
  await store.save(7, e);
  assert.deepEqual(await store.load(7), e);
  const keys = async () => (await Array.fromAsync(kv.list({ prefix: ["entity", 7] }))).map((x) => x.key.join("/"));
  assert.deepEqual((await keys()).sort(), [
    "entity/7/base/0",
    "entity/7/cell/0",
    "entity/7/cell/1",
    "entity/7/cell/2",
    "entity/7/meta",
  ]);
  await store.save(7, { ...e, cell: new Uint8Array([9]) });
  assert.deepEqual((await store.load(7))!.cell, new Uint8Array([9]));
  assert.deepEqual((await keys()).sort(), ["entity/7/base/0", "entity/7/cell/0", "entity/7/meta"]);
});
