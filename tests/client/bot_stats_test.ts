import assert from "node:assert/strict";
import { type BotTotals, LatencyHistogram, MoveLog, Observer } from "../../client/bots/bot_stats.ts";

function observer(measuring = true) {
  const totals: BotTotals = { enters: 0, leaves: 0, updates: 0, propertyEvents: 0, outOfOrder: 0, gaps: 0 };
  const moves = new MoveLog();
  const latency = new LatencyHistogram();
  const obs = new Observer(1, totals, moves, latency, () => measuring);
  return { totals, moves, latency, obs };
}

Deno.test("counters: steps of 1 are fine, lower values are out of order, jumps in view are gaps", () => {
  const { totals, obs } = observer();
  obs.enter(7, 3);
  obs.property(7, "counter", 4);
  obs.property(7, "counter", 5);
  assert.deepEqual([totals.outOfOrder, totals.gaps], [0, 0]);
  obs.property(7, "counter", 7);
  assert.equal(totals.gaps, 1, "5 -> 7 while in view");
  obs.property(7, "counter", 6);
  assert.equal(totals.outOfOrder, 1, "7 -> 6");
  obs.left(7);
  obs.enter(7, 12);
  assert.deepEqual([totals.outOfOrder, totals.gaps], [1, 1], "a jump across a leave is no gap");
  obs.enter(8, 5);
  obs.left(8);
  obs.enter(8, 4);
  assert.equal(totals.outOfOrder, 2, "lower than the last value seen, even across a leave");
  obs.property(8, "hp", 1);
  assert.deepEqual([totals.enters, totals.leaves, totals.propertyEvents], [4, 2, 5]);
});

Deno.test("latency: a seen position is matched to the mover's nearest recent move, once per move", () => {
  const { moves, latency, obs } = observer();
  moves.record(9, 1000, 0, 0);
  moves.record(9, 1100, 0.5, 0);
  moves.record(9, 1200, 1, 0);
  obs.moved(9, 0.52, 0.01, 1130); // the second move, seen 30 ms later
  obs.moved(9, 0.5, 0, 1150); // the same move again: not counted twice
  obs.moved(9, 0.02, 0, 1160); // an older move than one already seen: ignored
  obs.moved(9, 50, 50, 1170); // far from every move: no match
  obs.moved(1, 0, 0, 1180); // its own entity
  obs.moved(9, 1, 0, 1260);
  assert.equal(latency.count, 2);
  assert.equal(latency.percentile(50), 30);
  assert.equal(latency.percentile(99), 60);
});

Deno.test("nothing is counted outside the measurement, except out-of-order values and gaps", () => {
  const { totals, moves, latency, obs } = observer(false);
  moves.record(9, 0, 0, 0);
  obs.enter(9, 1);
  obs.property(9, "counter", 3);
  obs.moved(9, 0, 0, 10);
  assert.deepEqual(totals, { enters: 0, leaves: 0, updates: 0, propertyEvents: 0, outOfOrder: 0, gaps: 1 });
  assert.equal(latency.count, 0);
  assert.equal(latency.percentile(50), null);
});

Deno.test("latency, first sightings only: a move counts once, for the first observer that sees it", () => {
  const totals: BotTotals = { enters: 0, leaves: 0, updates: 0, propertyEvents: 0, outOfOrder: 0, gaps: 0 };
  const moves = new MoveLog(true);
  const latency = new LatencyHistogram();
  const a = new Observer(1, totals, moves, latency, () => true);
  const b = new Observer(2, totals, moves, latency, () => true);
  moves.record(9, 1000, 0, 0);
  moves.record(9, 1100, 0.5, 0);
  a.moved(9, 0, 0, 1020); // the first move, first seen by a: 20 ms
  b.moved(9, 0, 0, 1090); // seen again by b: not a sample
  b.moved(9, 0.5, 0, 1140); // the second move, first seen by b: 40 ms
  a.moved(9, 0.5, 0, 1150);
  assert.equal(latency.count, 2);
  assert.deepEqual([latency.percentile(1), latency.percentile(100)], [20, 40]);
});
