import assert from "node:assert/strict";
import { LOOP_DELAY_PERIOD_MS, LoopDelay } from "../../core/loop_delay.ts";

Deno.test("loop delay: percentiles and maximum of what was recorded, forgotten at reset", () => {
  const d = new LoopDelay();
  assert.equal(d.percentile(50), 0, "no sample yet reads 0");
  for (let ms = 1; ms <= 100; ms++) d.record(ms);
  assert.equal(d.count, 100);
  assert.equal(d.percentile(50), 0.05);
  assert.equal(d.percentile(99), 0.099);
  assert.equal(d.max, 0.1);
  d.reset();
  assert.equal(d.count, 0);
  assert.equal(d.max, 0);
  assert.equal(d.percentile(99), 0);
});

Deno.test("loop delay: past its ring it keeps the newest samples, and the maximum of all", () => {
  const d = new LoopDelay();
  d.record(500);
  for (let i = 0; i < 5000; i++) d.record(2);
  assert.equal(d.percentile(99), 0.002, "the old 500 ms sample has left the ring");
  assert.equal(d.max, 0.5, "the maximum covers every sample since the reset");
});

Deno.test("loop delay: a blocked event loop shows as a late timer", async () => {
  const d = new LoopDelay();
  d.start();
  try {
    // Let the timer fire once on time, then hold the loop for 300 ms.
    while (d.count === 0) await new Promise((r) => setTimeout(r, LOOP_DELAY_PERIOD_MS / 2));
    const until = performance.now() + 300;
    while (performance.now() < until) {
      // busy: nothing else runs
    }
    const before = d.count;
    while (d.count === before) await new Promise((r) => setTimeout(r, LOOP_DELAY_PERIOD_MS / 2));
    assert.ok(d.max >= 0.2 - LOOP_DELAY_PERIOD_MS / 1000, `max ${d.max} s after a 300 ms block`);
    assert.ok(d.percentile(50) < 0.2, "the samples before the block were near zero");
  } finally {
    d.stop();
  }
});

Deno.test("loop delay: stalled() tells a stall while waking from it, and for a while after", async () => {
  const d = new LoopDelay();
  d.start();
  try {
    while (d.count === 0) await new Promise((r) => setTimeout(r, LOOP_DELAY_PERIOD_MS / 2));
    assert.equal(d.stalled(250, 10_000), false, "no stall yet");
    const until = performance.now() + 400;
    while (performance.now() < until) {
      // busy: nothing else runs, as in a stopped process
    }
    // What runs first on waking (before the timer fires) already knows.
    assert.equal(d.stalled(250, 10_000), true, "waking from the stall");
    const before = d.count;
    while (d.count === before) await new Promise((r) => setTimeout(r, LOOP_DELAY_PERIOD_MS / 2));
    assert.equal(d.stalled(250, 10_000), true, "just after it");
    assert.equal(d.stalled(1000, 10_000), false, "shorter than a second");
    assert.equal(d.stalled(250, 0, performance.now() + 1), false, "not within the last 0 ms");
  } finally {
    d.stop();
  }
});
