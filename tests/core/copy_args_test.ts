import assert from "node:assert/strict";
import { argsBytes, copyArgs } from "../../core/bytes/mod.ts";

Deno.test("copyArgs copies a byte array's own bytes, not the buffer it is a view of", () => {
  const buffer = new Uint8Array(64 * 1024).map((_, i) => i & 255);
  const args = [7, "x", 2n ** 60n, null, buffer.subarray(10, 14), { nested: [buffer.subarray(20, 22)], ok: true }];
  const copy = copyArgs(args);
  assert.deepEqual(copy, args);
  const view = copy[4] as Uint8Array, nested = (copy[5] as { nested: Uint8Array[] }).nested[0];
  assert.equal(view.buffer.byteLength, 4);
  assert.equal(nested.buffer.byteLength, 2);
  // A copy: the sender may write its buffer again.
  buffer.fill(0);
  assert.deepEqual([...view], [10, 11, 12, 13]);
  assert.deepEqual([...nested], [20, 21]);
  assert.notEqual(copy[5], args[5]);
});

Deno.test("argsBytes counts what a copy holds: a view's own bytes, strings, and a little for each other value", () => {
  const buffer = new Uint8Array(64 * 1024);
  assert.equal(argsBytes(buffer.subarray(0, 100)), 116);
  assert.equal(argsBytes("x".repeat(5000)), 5016);
  assert.equal(argsBytes([1, null, true]), 16 + 3 * 16);
  assert.equal(argsBytes({ ab: [buffer.subarray(0, 10)] }), 16 + 2 + 16 + 26);
  // Grows with what is in it, nested or not.
  assert.ok(argsBytes([[["y".repeat(1000)]]]) > 1000);
});
