/**
 * The capacity benchmark's reading of a cell's tick times over its window: the difference of two readings of
 * the tick histogram from /metrics, first as text, then from a real cluster's admin API.
 */
import assert from "node:assert/strict";
import { parseTickBuckets, readTickBuckets, tickWindow } from "../../bench/lib/tick_window.ts";
import { budgetMet, sideFor } from "../../bench/capacity.ts";
import { Procs } from "../../testing/procs.ts";
import { startCluster } from "../helpers/players.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

const text = (space: number, counts: number[]) =>
  ["0.01", "0.05", "0.1", "0.25", "+Inf"].map((le, i) =>
    `seamless_cell_tick_seconds_bucket{le="${le}",space="${space}",cell="1",role="cellapp",id="1"} ${counts[i]}`
  ).join("\n");

Deno.test("tick window: ticks, those over the budget and bucket percentiles from two histogram readings", () => {
  const before = parseTickBuckets(`# HELP x\n${text(2, [10, 10, 10, 10, 10])}\n${text(1, [5, 5, 5, 5, 5])}`, 2);
  assert.deepEqual([...before.entries()], [[0.01, 10], [0.05, 10], [0.1, 10], [0.25, 10], [Infinity, 10]]);
  // 200 more ticks: 150 under 10 ms, 45 under 50 ms, 3 under 100 ms, 2 over it (one under 250 ms, one above).
  const after = parseTickBuckets(text(2, [160, 205, 208, 209, 210]), 2);
  const w = tickWindow(before, after, 100);
  assert.deepEqual(w, { ticks: 200, overBudget: 2, p50LeMs: 10, p99LeMs: 100, maxLeMs: Infinity });
  assert.equal(budgetMet(w), true, "2 of 200 is 1 %: p99 within the budget");
  const worse = tickWindow(before, parseTickBuckets(text(2, [160, 205, 207, 209, 210]), 2), 100);
  assert.equal(worse.overBudget, 3);
  assert.equal(worse.p99LeMs, 250);
  assert.equal(budgetMet(worse), false);
  assert.equal(budgetMet(tickWindow(before, before, 100)), false, "no ticks: not met");
  assert.equal(tickWindow(before, before, 100).p50LeMs, null);
  assert.equal(sideFor(500), 2000);
  assert.equal(sideFor(2000), 4000, "four times the clients on four times the area");
});

Deno.test(
  "tick window: read from a real cellapp's histogram through the admin API, it counts the ticks",
  opts,
  async () => {
    await using procs = new Procs();
    const cluster = await startCluster(procs);
    // A new cell ticks once its cellapp's lease is granted: the histogram appears with its first tick.
    const before = await waitFor("the first tick of space 1", () => readTickBuckets(cluster.admin, 1), 10_000);
    const t0 = performance.now();
    await waitFor("ticks of space 1", async () => {
      return tickWindow(before, await readTickBuckets(cluster.admin, 1), 100).ticks >= 10;
    });
    const w = tickWindow(before, await readTickBuckets(cluster.admin, 1), 100);
    const rate = w.ticks / ((performance.now() - t0) / 1000);
    assert.ok(
      rate > 3 && rate < 15,
      `about 10 ticks a second: ${w.ticks} in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    assert.equal(w.overBudget, 0, JSON.stringify(w));
    await assert.rejects(readTickBuckets(cluster.admin, 999), /no seamless_cell_tick_seconds of space 999/);
  },
);
