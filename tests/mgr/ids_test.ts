import { openDenoKv } from "../../core/db/mod.ts";
import assert from "node:assert/strict";
import { IdAllocator, OBSERVE_SLACK } from "../../mgr/ids.ts";
import { MAX_ENTITY_ID } from "../../core/bytes/mod.ts";

Deno.test("entity id ranges never repeat, across a reopen of the database", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const kv = await openDenoKv(`${dir}/ids.kv`);
    const a = await IdAllocator.open(kv);
    const ranges = await Promise.all([a.allocate(100), a.allocate(50), a.allocate(10)]);
    assert.deepEqual(ranges, [[1, 101], [101, 151], [151, 161]]);
    await kv.close();
    const kv2 = await openDenoKv(`${dir}/ids.kv`);
    const b = await IdAllocator.open(kv2);
    assert.equal(b.next, 161, "the high-water mark survived");
    b.observe(500);
    assert.deepEqual(await b.allocate(1), [501, 502], "a process reporting higher ids moves the counter on");
    b.observe(10);
    assert.deepEqual(await b.allocate(1), [502, 503], "a lower report changes nothing");
    await kv2.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("without a database the counter starts at 1 and follows reports", async () => {
  const a = await IdAllocator.open(null);
  assert.deepEqual(await a.allocate(5), [1, 6]);
  a.observe(1000);
  assert.deepEqual(await a.allocate(5), [1001, 1006]);
});

Deno.test("a report far past the counter is refused, and ids end before they stop being exact", async () => {
  const a = await IdAllocator.open(null);
  assert.match(a.observe(OBSERVE_SLACK + 10) ?? "", /more than 4294967296 past the highest handed out \(0\)/);
  assert.deepEqual(await a.allocate(1), [1, 2], "the counter did not move");
  // Step by step, as honest processes would: the end of the id space comes, and nothing is handed out twice.
  while (a.next + OBSERVE_SLACK < MAX_ENTITY_ID) assert.equal(a.observe(a.next + OBSERVE_SLACK - 1), null);
  assert.equal(a.observe(MAX_ENTITY_ID - 2), null);
  assert.deepEqual(await a.allocate(2), [MAX_ENTITY_ID - 1, MAX_ENTITY_ID + 1]);
  await assert.rejects(a.allocate(1), /ids end at 281474976710656/);
  assert.ok(a.observe(MAX_ENTITY_ID + 1));
});
