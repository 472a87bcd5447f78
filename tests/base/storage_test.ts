/** Persistent entities in Deno KV: saves asked for together share one commit, and still each land whole. */
import { type DbKey, openDenoKv } from "../../core/db/mod.ts";
import assert from "node:assert/strict";
import { EntityStore, type StoredEntity } from "../../base/persist/storage.ts";
import { CHUNK, MAX_GROUP } from "../../base/persist/storage.ts";
import { heldIdHighWater } from "../../base/persist/held_ids.ts";

const entity = (x: number, bytes = 16): StoredEntity => ({
  type: "Avatar",
  base: new Uint8Array(bytes).fill(x & 0xff),
  cell: new Uint8Array(bytes).fill((x + 1) & 0xff),
  position: [x, 0, -x],
  direction: [0, x / 100, 0],
  spaceId: 1,
});

Deno.test("saves asked for in one turn share one commit, and each entity reads back whole", async () => {
  await using kv = await openDenoKv(":memory:");
  const store = new EntityStore(kv);
  await Promise.all(Array.from({ length: 30 }, (_, i) => store.save(i + 1, entity(i + 1))));
  assert.equal(store.stats.commits, 1, "30 saves, one commit");
  assert.equal(store.stats.grouped, 1);
  for (let id = 1; id <= 30; id++) assert.deepEqual(await store.load(id), entity(id), `entity ${id}`);
  assert.equal(await heldIdHighWater(kv), 30, "the held-id mark is raised to the group's highest id");
});

Deno.test("more saves than one commit takes go in several, in order", async () => {
  await using kv = await openDenoKv(":memory:");
  const store = new EntityStore(kv);
  const n = MAX_GROUP * 2 + 5;
  await Promise.all(Array.from({ length: n }, (_, i) => store.save(i + 1, entity(i + 1))));
  assert.equal(store.stats.commits, 3, `${n} saves in groups of at most ${MAX_GROUP}`);
  assert.deepEqual(await store.load(n), entity(n));
  // Big states: fewer of them fit in one commit.
  const big = (x: number) => entity(x, 3 * CHUNK);
  const before = store.stats.commits;
  await Promise.all([1, 2, 3, 4].map((id) => store.save(id, big(id))));
  assert.ok(store.stats.commits - before >= 2, "1.4 MB of state does not go in one commit");
  for (const id of [1, 2, 3, 4]) assert.deepEqual(await store.load(id), big(id));
});

Deno.test("the same entity saved twice in one turn: the later state wins, and a shrunk state leaves no chunk behind", async () => {
  await using kv = await openDenoKv(":memory:");
  const store = new EntityStore(kv);
  const bigger = entity(5, 2 * CHUNK + 10), smaller = entity(6, 10);
  await Promise.all([store.save(9, bigger), store.save(1, entity(1)), store.save(9, smaller)]);
  assert.deepEqual(await store.load(9), smaller);
  const left = [];
  for await (const e of kv.list(["entity", 9, "base"])) left.push(e.key);
  assert.equal(left.length, 1, "only the smaller state's one chunk is left");
});

Deno.test("a group that raced another writer is retried one by one, and every save lands", async () => {
  await using kv = await openDenoKv(":memory:");
  const store = new EntityStore(kv);
  await store.save(2, entity(2));
  const failed: string[] = [];
  store.onGroupFailed = (why) => failed.push(why);
  // Another writer changes entity 2's meta after the group read it and before it committed.
  const real = kv.getMany.bind(kv);
  let raced = false;
  kv.getMany = (async (keys: readonly DbKey[]) => {
    const got = await real(keys);
    if (!raced) {
      raced = true;
      await kv.set(["entity", 2, "meta"], { ...(got[1].value as object), savedAt: 0 });
    }
    return got;
  }) as typeof kv.getMany;
  await Promise.all([1, 2, 3].map((id) => store.save(id, entity(id + 10))));
  assert.equal(failed.length, 1, "the group's failure is reported");
  assert.match(failed[0], /raced another save/);
  for (const id of [1, 2, 3]) assert.deepEqual(await store.load(id), entity(id + 10), `entity ${id}`);
});

Deno.test("nothing is written while the gate holds (a baseapp waiting to be confirmed after a stall)", async () => {
  await using kv = await openDenoKv(":memory:");
  const store = new EntityStore(kv);
  const open = Promise.withResolvers<void>();
  store.gate = () => open.promise;
  const saves = Promise.all([1, 2].map((id) => store.save(id, entity(id))));
  // The saves have had many turns to commit, had the gate let them.
  for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 5));
  assert.equal(store.stats.commits, 0);
  assert.equal((await kv.get(["entity", 1, "meta"])).value, null);
  open.resolve();
  await saves;
  assert.equal(store.stats.commits, 1);
  assert.deepEqual(await store.load(2), entity(2));
});

Deno.test("a gate that refuses (the baseapp was fenced) fails every save of the group, writing nothing", async () => {
  await using kv = await openDenoKv(":memory:");
  const store = new EntityStore(kv);
  store.gate = () => Promise.reject(new Error("this baseapp was fenced"));
  const got = await Promise.allSettled([1, 2].map((id) => store.save(id, entity(id))));
  for (const r of got) {
    assert.equal(r.status, "rejected");
    assert.match(String((r as PromiseRejectedResult).reason), /fenced/);
  }
  assert.equal((await kv.get(["entity", 1, "meta"])).value, null);
});
