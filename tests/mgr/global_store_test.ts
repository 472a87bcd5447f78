import assert from "node:assert/strict";
import { GlobalStore, MAX_GLOBAL_KEYS } from "../../mgr/base_scripts.ts";
import { MAX_GLOBAL_VALUE_BYTES } from "../../core/base_script.ts";

Deno.test("global store: changes are numbered in order; bad keys and values are refused and change nothing", () => {
  const s = new GlobalStore();
  assert.deepEqual(s.set("a", "1"), ["a", "1", 1]);
  assert.deepEqual(s.set("b", '{"x":[1,2]}'), ["b", '{"x":[1,2]}', 2]);
  assert.deepEqual(s.set("a", null), ["a", null, 3]);
  assert.deepEqual(s.entries(), [["b", '{"x":[1,2]}', 2]]);

  assert.throws(() => s.set("c", "{nope"), /global value of "c" is not JSON/);
  assert.throws(() => s.set("", "1"), /a global key is a string of 1-200 characters/);
  assert.throws(() => s.set("k".repeat(201), "1"), /1-200 characters/);
  assert.throws(() => s.set("big", JSON.stringify("x".repeat(MAX_GLOBAL_VALUE_BYTES))), /at most 16384 are allowed/);
  assert.equal(s.seq, 3, "a refused change takes no number");
  assert.deepEqual(s.entries().map((e) => e[0]), ["b"]);
});

Deno.test("global store: a limit on keys; a fresh store adopts a baseapp's database, a used one does not", () => {
  const s = new GlobalStore();
  for (let i = 0; i < MAX_GLOBAL_KEYS; i++) s.set(`k${i}`, "0");
  assert.throws(() => s.set("one more", "0"), /holds 10000 keys already/);
  s.set("k1", "1"); // Replacing a key is still allowed.
  assert.equal(s.adopt([["x", "1", 99]]), 0, "a store that ordered changes keeps its own");

  const fresh = new GlobalStore();
  assert.equal(fresh.adopt([["x", "1", 7], ["bad", "{", 8], ["gone", null, 9]]), 1);
  assert.deepEqual(fresh.entries(), [["x", "1", 7]]);
  assert.deepEqual(fresh.set("y", "2"), ["y", "2", 8], "numbering goes on after what it adopted");
});
