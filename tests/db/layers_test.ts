/**
 * The baseapp's and the cellappmgr's stores on a real PostgreSQL server: entities (grouped saves, chunks, the held-id
 * mark), accounts, resume tokens, the global store, the id allocator and the drains; and a PostgreSQL outage, which a
 * save waits out and a login is refused through.
 */
import assert from "node:assert/strict";
import { type Db, openDb } from "../../core/db/mod.ts";
import { Accounts, EntityStore, type StoredEntity } from "../../base/mod.ts";
import { CHUNK } from "../../base/persist/storage.ts";
import { heldIdHighWater } from "../../base/persist/held_ids.ts";
import { UNAVAILABLE } from "../../base/login/accounts.ts";
import { ResumeTokens } from "../../base/login/resume_token.ts";
import { BaseGlobals } from "../../base/entity/global_data.ts";
import { IdAllocator } from "../../mgr/ids.ts";
import { loadDrains, saveDrains } from "../../mgr/balance/drains.ts";
import { memoryLogger } from "../../testing/log.ts";
import { PgServer, skipWithoutPostgres } from "../../testing/postgres.ts";
import { waitFor } from "../../testing/wait.ts";

const entity = (x: number, bytes = 16): StoredEntity => ({
  type: "Avatar",
  base: new Uint8Array(bytes).fill(x & 0xff),
  cell: new Uint8Array(bytes).fill((x + 1) & 0xff),
  position: [x, 0, -x],
  direction: [0, x / 100, 0],
  spaceId: 1,
});

const accountsOn = (db: Db, first = 500) => {
  let next = first;
  return new Accounts(db, { entityType: "Avatar", iterations: 1000, newEntityId: () => Promise.resolve(next++) });
};

const CASES: Record<string, (open: () => Promise<Db>) => Promise<void>> = {
  "entities: saves in one turn share a commit, chunks come back whole, the mark rises": async (open) => {
    await using db = await open();
    const store = new EntityStore(db);
    await Promise.all(Array.from({ length: 30 }, (_, i) => store.save(i + 1, entity(i + 1))));
    assert.equal(store.stats.commits, 1);
    for (let id = 1; id <= 30; id++) assert.deepEqual(await store.load(id), entity(id));
    assert.equal(await heldIdHighWater(db), 30);
    // A big state in several chunks, then a small one: the chunks it no longer has are deleted.
    await store.save(9, entity(9, CHUNK * 2 + 5));
    assert.deepEqual(await store.load(9), entity(9, CHUNK * 2 + 5));
    await store.save(9, entity(9));
    assert.deepEqual(await store.load(9), entity(9));
    assert.equal((await Array.fromAsync(db.list(["entity", 9, "base"]))).length, 1);
  },

  "entities: two stores on one database (two baseapps) race for one entity; every save lands": async (open) => {
    await using a = await open();
    await using b = await open();
    const [sa, sb] = [new EntityStore(a), new EntityStore(b)];
    await Promise.all([
      ...Array.from({ length: 10 }, (_, i) => sa.save(i + 1, entity(i + 1))),
      ...Array.from({ length: 10 }, (_, i) => sb.save(i + 1, entity(i + 101))),
    ]);
    for (let id = 1; id <= 10; id++) {
      const got = (await sa.load(id))!;
      assert.ok([id, id + 100].includes(got.position[0]), `entity ${id} is one save whole: ${got.position}`);
      assert.deepEqual(got, entity(got.position[0]));
    }
  },

  "accounts: made once, known to another baseapp's handle, concurrent first logins make one": async (open) => {
    await using a = await open();
    await using b = await open();
    const first = await accountsOn(a).login({ name: "ann", password: "pw", remote: "t" });
    assert.deepEqual(first, { ok: true, entityId: 500, type: "Avatar", created: true });
    const other = accountsOn(b, 900);
    assert.deepEqual(await other.login({ name: "ann", password: "pw", remote: "t" }), {
      ok: true,
      entityId: 500,
      type: "Avatar",
      created: false,
    });
    assert.deepEqual(await other.login({ name: "ann", password: "nope", remote: "u" }), {
      ok: false,
      reason: "wrong password",
    });
    const both = await Promise.all([
      accountsOn(a, 600).login({ name: "bob", password: "pw", remote: "t" }),
      accountsOn(b, 700).login({ name: "bob", password: "pw", remote: "t" }),
    ]);
    assert.equal(both.filter((r) => r.ok && r.created).length, 1, JSON.stringify(both));
    assert.ok(both.every((r) => r.ok));
    const ids = both.map((r) => r.ok ? r.entityId : 0);
    assert.equal(ids[0], ids[1], "both logins name the one account's entity");
    assert.equal(await heldIdHighWater(a), Math.max(500, ids[0]));
  },

  "resume tokens: the secret is shared through the database, and a token is used once": async (open) => {
    await using a = await open();
    await using b = await open();
    const ta = await ResumeTokens.open(a, null);
    const tb = await ResumeTokens.open(b, null);
    const token = await ta.issue({ entityId: 5, type: "Avatar", account: "ann" });
    assert.deepEqual(await tb.redeem(token), { ok: true, claim: { entityId: 5, type: "Avatar", account: "ann" } });
    assert.deepEqual(await ta.redeem(token), { ok: false, reason: "resume token already used; log in again" });
  },

  "the global store, the cellappmgr's id mark and drains": async (open) => {
    await using db = await open();
    const host = { log: memoryLogger(), mgr: () => null, changed: () => {} };
    const g = await BaseGlobals.open(db, host);
    g.apply(["boss", JSON.stringify({ hp: 5 }), 1]);
    g.apply(["gone", JSON.stringify(1), 2]);
    g.apply(["gone", null, 3]);
    await g.flushed();
    const again = await BaseGlobals.open(db, host);
    assert.deepEqual(again.keys(), ["boss"]);
    assert.deepEqual(again.get("boss"), { hp: 5 });

    const ids = await IdAllocator.open(db);
    assert.deepEqual(await ids.allocate(100), [1, 101]);
    assert.equal((await IdAllocator.open(db)).next, 101);

    await saveDrains(db, new Set([3, 1]), host.log);
    assert.deepEqual([...await loadDrains(db, host.log)], [1, 3]);
  },
};

Deno.test({
  name: "stores on PostgreSQL",
  ignore: skipWithoutPostgres(),
  fn: async (t) => {
    await using pg = await PgServer.start();
    let n = 0;
    for (const [name, run] of Object.entries(CASES)) {
      await t.step(name, async () => {
        const url = await pg.createDatabase(`layers_${++n}`);
        await run(() => openDb({ kv: "", db: url }));
      });
    }
  },
});

Deno.test({
  name: "PostgreSQL away: a save waits and lands once it is back; a login is refused with the reason meanwhile",
  ignore: skipWithoutPostgres(),
  fn: async () => {
    await using pg = await PgServer.start();
    await using db = await openDb({ kv: "", db: pg.url });
    const store = new EntityStore(db);
    const accounts = accountsOn(db);
    assert.ok((await accounts.login({ name: "ann", password: "pw", remote: "t" })).ok);
    await store.save(1, entity(1));
    const waits: string[] = [];
    store.onUnavailable = (e) => waits.push(e.message);

    await pg.stop();
    let acknowledged = false;
    const saving = store.save(1, entity(2)).then(() => (acknowledged = true));
    await waitFor("the save waiting for the database", () => waits.length >= 2, 10_000);
    assert.match(waits[0], /^PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres is unreachable/);
    assert.deepEqual(await accounts.login({ name: "ann", password: "pw", remote: "t" }), {
      ok: false,
      reason: UNAVAILABLE,
    });
    await assert.rejects(() => store.load(1), /unreachable/);
    assert.equal(acknowledged, false, "not acknowledged while the database is away");

    await pg.resume();
    await saving;
    assert.deepEqual(await store.load(1), entity(2), "the save that waited is in the database");
    assert.ok((await accounts.login({ name: "ann", password: "pw", remote: "t2" })).ok, "logins work again");
  },
});

Deno.test({
  name: "PostgreSQL: a save that waited out an outage writes nothing if its baseapp was fenced meanwhile",
  ignore: skipWithoutPostgres(),
  fn: async () => {
    await using pg = await PgServer.start();
    await using db = await openDb({ kv: "", db: pg.url });
    const store = new EntityStore(db);
    await store.save(1, entity(1));
    let fenced = false;
    store.gate = () => fenced ? Promise.reject(new Error("this baseapp was fenced: test")) : Promise.resolve();
    let waited = 0;
    store.onUnavailable = () => waited++;
    await pg.stop();
    const saving = store.save(1, entity(2));
    saving.catch(() => {});
    await waitFor("the save waiting for the database", () => waited >= 1, 10_000);
    fenced = true;
    await pg.resume();
    await assert.rejects(saving, /fenced/);
    assert.deepEqual(await store.load(1), entity(1), "the restored copy's state stands");
  },
});

Deno.test({
  name: "PostgreSQL that answers nothing (as behind a cut link): logins are refused in time, a save waits and lands",
  ignore: skipWithoutPostgres(),
  fn: async () => {
    await using pg = await PgServer.start();
    await using db = await openDb({ kv: "", db: pg.url }, { answerTimeoutMs: 1000 });
    const store = new EntityStore(db);
    const accounts = accountsOn(db);
    assert.ok((await accounts.login({ name: "ann", password: "pw", remote: "t" })).ok);
    await store.save(1, entity(1));
    pg.freeze(true);
    try {
      const saving = store.save(1, entity(3));
      const start = performance.now();
      const refused = await accounts.login({ name: "ann", password: "pw", remote: "t" });
      assert.deepEqual(refused, { ok: false, reason: UNAVAILABLE });
      assert.ok(performance.now() - start < 5000, `refused after ${Math.round(performance.now() - start)} ms`);
      pg.freeze(false);
      await saving;
    } finally {
      pg.freeze(false);
    }
    assert.deepEqual(await store.load(1), entity(3));
    assert.ok((await accounts.login({ name: "ann", password: "pw", remote: "t2" })).ok);
  },
});
