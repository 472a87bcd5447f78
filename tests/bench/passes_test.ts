import assert from "node:assert/strict";
import { applyRule, medianRatio, nearestMedian, type Pass, PEER_RULE, spread } from "../../bench/lib/passes.ts";

const passes = (values: number[], others: (number | null)[]): Pass<number>[] =>
  values.map((v, i) => ({ index: i + 1, figures: v, other: others[i] }));

Deno.test("spread: median and range of the finite values, odd and even counts", () => {
  assert.deepEqual(spread([3, 1, 2]), { median: 2, min: 1, max: 3, n: 3 });
  assert.deepEqual(spread([4, 1, null, 3, NaN, 2, undefined]), { median: 2.5, min: 1, max: 4, n: 4 });
  assert.deepEqual(spread([]), { median: null, min: null, max: null, n: 0 });
  assert.deepEqual(medianRatio(spread([1, 2, 3]), spread([4, 4, 4])), 0.5);
  assert.deepEqual(medianRatio(spread([1]), spread([])), null);
});

Deno.test("the disturbance rule drops a planted disturbed pass, so its outlier moves no median", () => {
  // Pass 3 ran beside other work (40 % of a core) and reads 3 times the others.
  const all = passes([1.0, 1.1, 3.0, 0.9, 1.05], [0.02, 0.03, 0.4, 0.01, 0.05]);
  const k = applyRule(all, PEER_RULE);
  assert.deepEqual(k.disturbed.map((p) => p.index), [3]);
  assert.deepEqual(k.kept.map((p) => p.index), [1, 2, 4, 5]);
  assert.ok(!k.marked);
  assert.deepEqual(spread(k.kept.map((p) => p.figures)).max, 1.1);
  // Without the rule the outlier would have moved the median and the range.
  assert.deepEqual(spread(all.map((p) => p.figures)).max, 3.0);
});

Deno.test("the rule keeps disturbed passes, marked, when too few clean ones would remain", () => {
  const k = applyRule(passes([1, 5, 6], [0.01, 0.5, 0.6]), PEER_RULE);
  assert.deepEqual(k.kept.length, 3);
  assert.ok(k.marked);
  assert.deepEqual(k.disturbed.map((p) => p.index), [2, 3]);
  // An unknown share of other work is not a disturbance.
  const unknown = applyRule(passes([1, 2], [null, null]), PEER_RULE);
  assert.deepEqual(unknown.disturbed.length, 0);
});

Deno.test("the passes table reports medians, ranges and ratios, and names the passes it dropped", async () => {
  const { passesTable } = await import("../../bench/lib/peer_report.ts");
  const ours = (cpu: number) => ({
    connected: 100,
    cpuMsPerClientSec: cpu,
    cores: { baseapp: cpu / 20, cellapp: cpu / 20 },
    bytesPerClientSec: 300,
    p50: 60,
    p99: 120,
    rssMB: 200,
    rssByRole: {},
    botCpuPct: 10,
    tickP99: 5,
    errors: 0,
    otherCores: 0,
    breakdown: null,
  });
  const peer = (cpu: number) => ({
    version: "0.16",
    connected: 100,
    serverCpuPct: 50,
    serverCpuSecPerClientPerSec: cpu / 1000,
    serverRssMB: 150,
    bytesPerClientPerSec: 900,
    latencyP50Ms: 50,
    latencyP99Ms: 130,
    errors: 0,
    botCpuPct: 10,
    avgVisiblePlayers: 5,
    movesSentPerClientPerSec: 10,
  });
  const md = passesTable([{
    side: 400,
    ours: [0.6, 0.7, 2.0, 0.65].map((c, i) => ({ index: i + 1, figures: ours(c), other: i === 2 ? 0.5 : 0.01 })),
    peer: [1.0, 0.8, 0.9, 1.1].map((c, i) => ({ index: i + 1, figures: peer(c), other: 0.01 })),
    floor: [0.3, 0.35, 0.3, 0.32].map((c, i) => ({
      index: i + 1,
      figures: { msPerClientSec: c, relayMsPerClientSec: c + 0.1, down: 30 },
      other: 0,
    })),
  }], PEER_RULE);
  assert.ok(md.includes("| S = 400 m | CPU ms per client-s | 0.650 (0.600–0.700) | 0.950 (0.800–1.100) | 0.68 |"), md);
  assert.ok(md.includes("ours: dropped as disturbed: 3 (50 %)"), md);
  assert.ok(
    md.includes("| S = 400 m | p50 move-to-seen, ms | 60.0 (60.0–60.0) | 50.0 (50.0–50.0) | 1.20 (+10.0 ms) |"),
    md,
  );
  // baseapp 0.65 / 20 cores over 100 clients = 0.325 ms per client-s against a floor of 0.31.
  assert.ok(md.includes("| 0.325 (0.300–0.350) | floor 0.310 (0.300–0.350) | 1.05 | ≤ 1.2 |"), md);
  // The relay floor's median 0.41 against Colyseus's 0.95.
  assert.ok(md.includes("relay floor 0.410 (0.400–0.450) | 0.950 (0.800–1.100) | 0.43 |"), md);
  assert.ok(md.includes("| S = 400 m | 3 | 2.000 | 0.900 | 0.300 | 0.400 | 50 % ⚑ / 1 % |"), md);
});

Deno.test("the pass shown in detail is the one nearest the median, not the first at or above it", () => {
  // The passes of a quiet run, in the order run: the median is 0.465 (pass 5), and pass 2 is the first above it.
  assert.equal(nearestMedian([0.458, 0.481, 0.447, 0.547, 0.465]), 4);
  assert.equal(nearestMedian([1, 2]), 0);
  assert.equal(nearestMedian([]), -1);
});
