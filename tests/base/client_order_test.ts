import assert from "node:assert/strict";
import { ClientFrameOrder } from "../../base/client/client_order.ts";
import { memoryLogger } from "../../testing/log.ts";

const f = (n: number) => new Uint8Array([n]);

function order(limits = { maxFrames: 8, maxBytes: 1024 }) {
  const got: number[] = [], moves: string[] = [];
  const log = memoryLogger();
  const o = new ClientFrameOrder((b) => got.push(b[0]), (s, a) => moves.push(`${s}@${a}`), log, limits);
  o.start("A");
  return { o, got, moves, log };
}

Deno.test("frames of the new cellapp wait for the old one's move marker, then follow in order", () => {
  const { o, got, moves } = order();
  o.frame(0, f(1), "A");
  o.frame(1, f(3), "B"); // the new real's first frame overtakes the old one's last
  o.frame(0, f(2), "A");
  assert.deepEqual(got, [1, 2]);
  o.moved(0, 9, "B", "A");
  assert.deepEqual(got, [1, 2, 3]);
  assert.deepEqual(moves, ["9@B"]);
  o.frame(1, f(4), "B");
  o.frame(0, f(99), "A"); // stale: the old real's epoch is over
  assert.deepEqual(got, [1, 2, 3, 4]);
  assert.equal(o.stats.stale, 1);
});

Deno.test("two moves whose markers arrive out of order, and a move back to the first cellapp", () => {
  const { o, got, moves } = order();
  o.frame(2, f(5), "A"); // back on A already (epoch 2)
  o.moved(1, 9, "A", "B"); // B's marker before A's
  o.frame(1, f(4), "B");
  o.frame(0, f(1), "A");
  assert.deepEqual(got, [1]);
  o.moved(0, 9, "B", "A");
  assert.deepEqual(got, [1, 4, 5]);
  assert.deepEqual(moves, ["9@B", "9@A"]);
  assert.equal(o.epoch, 2);
  assert.equal(o.held, 0);
});

Deno.test("held frames are bounded; the loss is logged; a new cell entity starts over", () => {
  const { o, got, log } = order({ maxFrames: 2, maxBytes: 1024 });
  for (let i = 0; i < 4; i++) o.frame(1, f(i), "B");
  assert.equal(o.held, 2);
  assert.equal(o.stats.overflowed, 2);
  assert.ok(log.lines.some((l) => l.includes("dropped") && l.includes("wait for the move marker")));
  o.reset();
  assert.equal(o.held, 0);
  o.start("C");
  o.frame(0, f(7), "C");
  assert.deepEqual(got, [7]);
});

Deno.test("only the cellapp holding the real of an epoch speaks for it: frames and markers from others are dropped", () => {
  const { o, got, moves, log } = order();
  o.frame(0, f(1), "X"); // a cellapp that never held it
  o.moved(0, 9, "X", "X"); // nor may it move the client elsewhere
  o.frame(1, f(2), "X"); // held: epoch 1's cellapp is not known yet
  o.frame(1, f(3), "B");
  o.moved(0, 9, "B", "A"); // the genuine marker: epoch 1 is on B
  assert.deepEqual(got, [3], "only B's frame of epoch 1 is delivered");
  assert.deepEqual(moves, ["9@B"]);
  o.frame(1, f(4), "A"); // A's epoch is over and it no longer holds the real
  o.frame(1, f(5), "B");
  assert.deepEqual(got, [3, 5]);
  assert.equal(o.stats.foreign, 4);
  assert.equal(log.lines.filter((l) => l.includes("dropped: the real is on")).length, 2, "logged once per sender");
});

Deno.test("a notice (a teleport) takes effect in order with its epoch's frames, and only from the cellapp holding it", () => {
  const { o, got } = order();
  const seen: string[] = [];
  o.frame(0, f(1), "A");
  o.notice(1, "B", () => seen.push(`notice after ${got.join(",")}`)); // the new real's, before the old one's marker
  o.frame(0, f(2), "A");
  assert.equal(seen.length, 0, "held for the old epoch's marker");
  o.moved(0, 9, "B", "A");
  assert.deepEqual(seen, ["notice after 1,2"]);
  o.notice(1, "A", () => seen.push("foreign")); // A no longer holds it
  o.notice(0, "B", () => seen.push("stale"));
  o.notice(1, "B", () => seen.push("now"));
  assert.deepEqual(seen, ["notice after 1,2", "now"]);
  assert.equal(o.held, 0);
});

Deno.test("what the new real's cellapp sends before the baseapp hears where it is waits for that, then goes in order", () => {
  const got: number[] = [], moves: string[] = [], seen: string[] = [];
  const log = memoryLogger();
  const o = new ClientFrameOrder((b) => got.push(b[0]), (s, a) => moves.push(`${s}@${a}`), log);
  // The cellapp's first backup (a notice) and frame overtake its reply, which comes by way of the cellappmgr.
  o.notice(0, "A", () => seen.push(`backup after ${got.join(",")}`));
  o.frame(0, f(1), "A");
  o.frame(0, f(9), "X"); // a cellapp that does not hold it
  o.frame(1, f(3), "B");
  o.moved(0, 9, "B", "A"); // and it moved on at once
  assert.deepEqual([got, seen, moves], [[], [], []], "nothing is judged before the entity is located");
  assert.equal(o.stats.foreign, 0);
  o.start("A");
  assert.deepEqual(seen, ["backup after "]);
  assert.deepEqual(got, [1, 3], "A's frame, then the move marker, then B's");
  assert.deepEqual(moves, ["9@B"]);
  assert.equal(o.stats.foreign, 1, "X's frame is dropped once the real is known to be on A");
  assert.equal(o.held, 0);
  assert.ok(!log.lines.some((l) => l.includes("no cellapp")), log.lines.join("\n"));
});
