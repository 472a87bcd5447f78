import assert from "node:assert/strict";
import { MoveClock, Walker } from "../../client/bots/bot_walk.ts";
import { waitFor } from "../../testing/wait.ts";

Deno.test("MoveClock: each group runs once per interval, a tenth of the interval after the one before", async () => {
  const clock = new MoveClock(50, 5);
  const runs: [group: number, at: number][] = [];
  for (let g = 0; g < 5; g++) {
    clock.add(g, () => runs.push([g, performance.now()]));
    clock.add(g + 5, () => runs.push([g + 5, performance.now()]));
  }
  clock.start();
  try {
    await waitFor("three rounds", () => runs.length >= 30, 5000);
  } finally {
    clock.stop();
  }
  const n = runs.length;
  await new Promise((r) => setTimeout(r, 60));
  assert.equal(runs.length, n, "nothing runs after stop()");
  // Bots g and g + 5 share a group: they run in the same run; groups follow each other round the clock.
  for (let i = 0; i + 1 < runs.length; i += 2) {
    assert.equal(runs[i + 1][0] % 5, runs[i][0] % 5);
    if (i >= 2) {
      assert.equal(
        runs[i][0] % 5,
        (runs[i - 2][0] % 5 + 1) % 5,
        `order at run ${i}: ${runs.map((r) => r[0])}`,
      );
    }
  }
  // A round takes one interval (timers fire at or after their time; a loaded machine makes them late, not early).
  const round = (runs[runs.length - 1][1] - runs[0][1]) / ((runs.length / 2 - 1) / 5);
  assert.ok(round >= 45, `a round of 5 groups every 50 ms: ${round.toFixed(1)} ms`);
  assert.equal(clock.missed, 0);
});

Deno.test("MoveClock: the first group first runs at the clock's phase of a step, drawn at random unless given", async () => {
  // Steps of 100 ms: at phase 0.7 group 0 first runs 70 ms after the start, group 1 a step later, group 0 again an
  // interval after its first run; timers run at or after their time, so a run before that is a wrong phase.
  const clock = new MoveClock(200, 2, 0.7);
  assert.equal(clock.phaseMs, 70);
  const at: number[] = [];
  clock.add(0, () => at.push(performance.now()));
  clock.add(1, () => at.push(performance.now()));
  const start = performance.now();
  clock.start();
  try {
    await waitFor("three runs", () => at.length >= 3, 5000);
  } finally {
    clock.stop();
  }
  for (let k = 0; k < 3; k++) {
    const due = start + 70 + 100 * k;
    assert.ok(at[k] >= due - 1.5, `run ${k} came ${(due - at[k]).toFixed(1)} ms before its time: ${at}`);
  }
  const phases = new Set(Array.from({ length: 20 }, () => new MoveClock(100, 10).phaseMs));
  assert.ok(phases.size > 10, `drawn phases: ${[...phases]}`);
  assert.ok([...phases].every((p) => p >= 0 && p < 10));
  assert.throws(() => new MoveClock(100, 10, 1), /phase 1/);
});

Deno.test("MoveClock: after a stall each group runs once, not in a burst, and the intervals lost are counted", async () => {
  const clock = new MoveClock(40, 4);
  const runs: number[] = [], at: number[][] = [[], [], [], []];
  for (let g = 0; g < 4; g++) {
    clock.add(g, () => {
      runs.push(g);
      at[g].push(performance.now());
    });
  }
  clock.start();
  try {
    await waitFor("a first round", () => runs.length >= 4, 5000);
    const before = runs.length;
    const until = performance.now() + 200; // five intervals with the event loop blocked
    while (performance.now() < until) { /* stall */ }
    await new Promise((r) => setTimeout(r, 5));
    const after = runs.slice(before);
    assert.ok(clock.missed >= 14, `about 4 intervals lost by each group: missed ${clock.missed}`);
    assert.ok(after.length >= 4 && after.length <= 6, `one round right after the stall, no more: ${after}`);
    assert.deepEqual(new Set(after.slice(0, 4)).size, 4, `each group once: ${after}`);
    // The groups stay as late as the stall made them: each next run is an interval after its late one, as a
    // setInterval's would be, not back on the times they had before.
    const late = at.map((ts) => ts[ts.length - 1]);
    await waitFor("a round after the stall", () => at.every((ts, g) => ts[ts.length - 1] > late[g]), 5000);
    for (let g = 0; g < 4; g++) {
      const [t1, t2] = at[g].filter((t) => t >= late[g]);
      assert.ok(t2 - t1 >= 40 - 1.5, `group ${g} ran again ${(t2 - t1).toFixed(1)} ms after its late run`);
    }
  } finally {
    clock.stop();
  }
  assert.throws(() => new MoveClock(0, 10), /positive interval/);
  assert.throws(() => new MoveClock(100, 0), /1\+ groups/);
});

Deno.test("Walker: both walks keep a bot inside its square and step the distance asked for", () => {
  const area = { minX: 0, maxX: 20, minZ: 100, maxZ: 120 };
  for (const mode of ["wander", "peer"] as const) {
    const pos = { x: 10, y: 3, z: 110 };
    const w = new Walker(pos, area, 0.5, mode);
    let longest = 0;
    for (let i = 0; i < 5000; i++) {
      const [x, z] = [pos.x, pos.z];
      w.step();
      longest = Math.max(longest, Math.hypot(pos.x - x, pos.z - z));
      assert.ok(pos.x >= 0 && pos.x <= 20 && pos.z >= 100 && pos.z <= 120, `${mode}: ${pos.x}, ${pos.z} at ${i}`);
    }
    assert.equal(pos.y, 3, "y is left alone");
    assert.ok(longest <= 0.5 + 1e-9 && longest > 0.49, `${mode}: steps of 0.5 m, longest ${longest}`);
  }
});
