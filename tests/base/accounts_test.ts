import { type Db, openDenoKv } from "../../core/db/mod.ts";
import assert from "node:assert/strict";
import { Accounts, constantTimeEqual, EntityStore, hashPassword } from "../../base/mod.ts";
import { CHUNK } from "../../base/persist/storage.ts";

function accounts(kv: Db, opts: Partial<ConstructorParameters<typeof Accounts>[1]> = {}): Accounts {
  let next = 500;
  return new Accounts(kv, {
    entityType: "Avatar",
    iterations: 1000,
    newEntityId: () => Promise.resolve(next++),
    ...opts,
  });
}
const remote = "127.0.0.1:1";

/** Why a login was refused ("" when it was not). */
function reasonOf(r: Awaited<ReturnType<Accounts["login"]>>): string {
  return r.ok ? "" : r.reason;
}

Deno.test("passwords are stored as salted PBKDF2-SHA256 hashes and compared in constant time", async () => {
  await using kv = await openDenoKv(":memory:");
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
  await using kv = await openDenoKv(":memory:");
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
  await using kv = await openDenoKv(":memory:");
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
  await using kv = await openDenoKv(":memory:");
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
  const keys = async () => (await Array.fromAsync(kv.list(["entity", 7]))).map((x) => x.key.join("/"));
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

/** A KV whose reads and writes are counted. */
function countedKv(kv: Db): { kv: Db; uses: { n: number } } {
  const uses = { n: 0 };
  const wrapped = new Proxy(kv, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target);
      if (typeof v !== "function") return v;
      return (...args: unknown[]) => {
        if (prop === "get" || prop === "getMany" || prop === "atomic" || prop === "set" || prop === "list") uses.n++;
        return v.apply(target, args);
      };
    },
  });
  return { kv: wrapped, uses };
}

Deno.test("accounts: an attempt the guard refuses is answered with the wait, without a KV read or a hash", async () => {
  await using raw = await openDenoKv(":memory:");
  const { kv, uses } = countedKv(raw);
  const clock = { t: 0 };
  const a = accounts(kv, { now: () => clock.t });
  assert.equal((await a.login({ name: "ada", password: "right", remote })).ok, true);
  for (let i = 0; i < 3; i++) {
    assert.equal((await a.login({ name: "ada", password: "wrong", remote: "10.1.1.1:9" })).ok, false);
  }
  const [kvBefore, hashesBefore] = [uses.n, a.hashes.stats.started];
  const refused = await a.login({ name: "ada", password: "right", remote: "10.1.1.2:9" });
  assert.deepEqual(refused, {
    ok: false,
    reason: "too many failed logins for this account; try again in 1 s",
    retryAfterMs: 1000,
  });
  assert.equal(uses.n, kvBefore, "no KV access");
  assert.equal(a.hashes.stats.started, hashesBefore, "no hash");
  clock.t += 1000;
  assert.equal((await a.login({ name: "ada", password: "right", remote })).ok, true, "after the wait it works");
  // The success reset the account's back-off: three more wrong passwords are checked before it starts again.
  for (let i = 0; i < 3; i++) {
    assert.equal(reasonOf(await a.login({ name: "ada", password: "wrong", remote: "10.1.1.1:9" })), "wrong password");
  }
});

Deno.test("accounts: a burst of wrong passwords runs only the hashes the back-off allows; others log in meanwhile", async () => {
  await using kv = await openDenoKv(":memory:");
  const a = accounts(kv, { now: () => 0, limits: { addressBurst: 1000 } });
  assert.equal((await a.login({ name: "victim", password: "right", remote })).ok, true);
  assert.equal((await a.login({ name: "alice", password: "pw", remote })).ok, true);
  const started = a.hashes.stats.started;
  const flood = Array.from(
    { length: 200 },
    (_, i) => a.login({ name: "victim", password: `guess${i}`, remote: "10.6.6.6:1" }),
  );
  const valid = a.login({ name: "alice", password: "pw", remote });
  const results = await Promise.all(flood);
  assert.deepEqual(await valid, { ok: true, entityId: 501, type: "Avatar", created: false });
  assert.ok(results.every((r) => !r.ok));
  const reasons = new Map<string, number>();
  for (const r of results) {
    const why = reasonOf(r).replace(/[\d.]+ s$/, "N s");
    reasons.set(why, (reasons.get(why) ?? 0) + 1);
  }
  assert.equal(reasons.get("wrong password"), 3, JSON.stringify([...reasons]));
  assert.equal(a.hashes.stats.started - started, 4, "three guesses and the valid login");
});

Deno.test("accounts: with the hash queue full, an attempt is refused as busy and counts no failure", async () => {
  await using kv = await openDenoKv(":memory:");
  const a = accounts(kv, { now: () => 0, limits: { hashConcurrency: 1, hashQueueMax: 2 } });
  let open!: () => void;
  const gate = new Promise<void>((r) => open = r);
  const held = [1, 2, 3].map((i) => a.hashes.run({ key: `10.9.0.${i}`, suspect: false }, () => gate));
  assert.equal(a.hashes.running + a.hashes.waiting, 3);
  for (let i = 0; i < 5; i++) {
    assert.deepEqual(await a.login({ name: "newbie", password: "pw", remote: "10.2.0.1:1" }), {
      ok: false,
      reason: "the server is busy checking other logins; try again in a few seconds",
    });
  }
  assert.equal(await a.get("newbie"), null, "a refused first login creates nothing");
  open();
  await Promise.all(held);
  assert.equal((await a.login({ name: "newbie", password: "pw", remote: "10.2.0.1:1" })).ok, true);
  // Five busy refusals of one account counted no failure: three wrong passwords are still checked.
  for (let i = 0; i < 3; i++) {
    assert.equal(reasonOf(await a.login({ name: "newbie", password: "x", remote: "10.2.0.1:1" })), "wrong password");
  }
});
