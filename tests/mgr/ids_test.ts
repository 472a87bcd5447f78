import assert from "node:assert/strict";
import { IdAllocator } from "../../mgr/ids.ts";

Deno.test("entity id ranges never repeat, across a reopen of the database", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const kv = await Deno.openKv(`${dir}/ids.kv`);
    const a = await IdAllocator.open(kv);
    const ranges = await Promise.all([a.allocate(100), a.allocate(50), a.allocate(10)]);
    assert.deepEqual(ranges, [[1, 101], [101, 151], [151, 161]]);
    kv.close();
    const kv2 = await Deno.openKv(`${dir}/ids.kv`);
    const b = await IdAllocator.open(kv2);
    assert.equal(b.next, 161, "the high-water mark survived");
    b.observe(500);
    assert.deepEqual(await b.allocate(1), [501, 502], "a process reporting higher ids moves the counter on");
    b.observe(10);
    assert.deepEqual(await b.allocate(1), [502, 503], "a lower report changes nothing");
    kv2.close();
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
