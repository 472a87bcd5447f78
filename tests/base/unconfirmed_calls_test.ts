/** The client calls a base keeps until a cell backup holds them (base/cell_link/unconfirmed_calls.ts). */
import assert from "node:assert/strict";
import { UnconfirmedCalls } from "../../base/cell_link/unconfirmed_calls.ts";

const args = new Uint8Array();

Deno.test("calls are numbered in order and go once a backup holds them", () => {
  const calls = new UnconfirmedCalls();
  const a = calls.add(7, 1, 0, args)!, b = calls.add(7, 1, 0, args)!, c = calls.add(7, 1, 0, args)!;
  assert.ok(a.seq < b.seq && b.seq < c.seq);
  calls.confirm(b.seq);
  assert.equal(calls.size, 1);
  calls.confirm(a.seq); // an older backup confirms nothing more, and takes nothing back
  assert.equal(calls.size, 1);
  calls.confirm(c.seq);
  assert.equal(calls.size, 0);
});

Deno.test("after a restore the own entity's later calls are replayed and kept; other entities' are answered", () => {
  const calls = new UnconfirmedCalls();
  const a = calls.add(7, 1, 0, args)!;
  const b = calls.add(7, 1, 0, args)!;
  const other = calls.add(9, 1, 0, args)!;
  const c = calls.add(7, 1, 0, args)!;
  const { replay, unknown } = calls.restored(7, a.seq);
  assert.deepEqual(replay.map((x) => x.seq), [b.seq, c.seq]);
  assert.deepEqual(unknown.map((x) => x.seq), [other.seq]);
  // Kept until a backup of the restored entity holds them: a second death replays them again.
  assert.equal(calls.size, 2);
  assert.deepEqual(calls.restored(7, a.seq).replay.map((x) => x.seq), [b.seq, c.seq]);
  assert.equal(calls.stats.lost, 1);
  assert.deepEqual(calls.lose().map((x) => x.seq), [b.seq, c.seq]);
  assert.equal(calls.size, 0);
});

Deno.test("a full log refuses a call rather than keep it unbounded", () => {
  const calls = new UnconfirmedCalls(2);
  assert.ok(calls.add(7, 1, 0, args));
  assert.ok(calls.add(7, 1, 0, args));
  assert.equal(calls.add(7, 1, 0, args), null);
  assert.equal(calls.stats.full, 1);
});

Deno.test("a base copy made later numbers above the earlier copy", async () => {
  const old = new UnconfirmedCalls(1000);
  for (let i = 0; i < 500; i++) old.add(7, 1, 0, args);
  const last = old.add(7, 1, 0, args)!.seq;
  await new Promise((r) => setTimeout(r, 2));
  assert.ok(new UnconfirmedCalls().add(7, 1, 0, args)!.seq > last);
});
