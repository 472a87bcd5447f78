import assert from "node:assert/strict";
import { BusyMeter } from "../../core/busy.ts";

function spin(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) { /* busy on purpose */ }
}

Deno.test("the busy share follows what the process does between samples, not only one loop", async () => {
  const meter = new BusyMeter(1);
  spin(300);
  const busy = meter.sample();
  assert.ok(busy > 0.5, `a spinning process is busy: ${busy}`);
  // Idle: waiting on a timer costs no CPU.
  await new Promise((r) => setTimeout(r, 300));
  const idle = meter.sample();
  assert.ok(idle < 0.3, `a waiting process is idle: ${idle}`);
  assert.equal(meter.sample(), idle, "a sample too soon after the last keeps its figure");
});

Deno.test("smoothing weighs each new sample", async () => {
  const meter = new BusyMeter(0.5);
  spin(250);
  const busy = meter.sample();
  await new Promise((r) => setTimeout(r, 250));
  const half = meter.sample();
  assert.ok(Math.abs(half - busy / 2) < 0.1, `an idle sample halves the figure: ${busy} then ${half}`);
});
