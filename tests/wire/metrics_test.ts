/** The check of a process's metrics answer: what the cellappmgr renders must be bounded and well named. */
import assert from "node:assert/strict";
import { checkMetricFamilies, MAX_FAMILIES, MAX_LABELS, MAX_SAMPLES } from "../../core/wire/mod.ts";
import { Buckets, ProcessMetrics } from "../../core/metrics.ts";

const family = (over: Record<string, unknown> = {}) => ({
  name: "x_total",
  help: "x",
  type: "counter",
  values: [{ labels: { a: "1", b: 2 }, value: 3 }],
  ...over,
});

Deno.test("checkMetricFamilies takes well-formed answers and refuses oversized, misnamed or spoofing ones", async () => {
  assert.equal(checkMetricFamilies([family()]), null);
  const h = new Buckets([0.1, 1]);
  h.observe(0.05);
  h.observe(5);
  assert.equal(
    checkMetricFamilies([family({ name: "h", type: "histogram", values: h.samples("h", { cell: 1 }) })]),
    null,
  );
  const own = new ProcessMetrics();
  try {
    assert.equal(checkMetricFamilies(await own.families()), null, "a process's own registry passes");
  } finally {
    own.close();
  }
  const refused: [unknown, RegExp][] = [
    [{}, /expected an array/],
    [Array.from({ length: MAX_FAMILIES + 1 }, (_, i) => family({ name: `f${i}` })), /at most 256 are taken/],
    [[family({ values: Array.from({ length: MAX_SAMPLES + 1 }, () => ({ labels: {}, value: 1 })) })], /more than/],
    [[family({ name: "x 1\n# evil" })], /not a metric name/],
    [[family({ type: "untyped" })], /expected one of/],
    [[family({ help: "h".repeat(1001) })], /at most 1000/],
    [[family({ extra: 1 })], /unexpected field "extra"/],
    [[family({ values: [{ labels: { role: "cellappmgr" }, value: 1 }] })], /label "role" is the cellappmgr's/],
    [[family({ values: [{ labels: { process: "0" }, value: 1 }] })], /label "process"/],
    [[family({ values: [{ labels: { "bad-name": "1" }, value: 1 }] })], /label name "bad-name" is not valid/],
    [[family({ values: [{ labels: { __name__: "1" }, value: 1 }] })], /label name "__name__"/],
    [[family({ values: [{ labels: { a: "v".repeat(257) }, value: 1 }] })], /at most 256 characters/],
    [[family({ values: [{ labels: { a: {} }, value: 1 }] })], /label "a"/],
    [
      [family({
        values: [{
          labels: Object.fromEntries(Array.from({ length: MAX_LABELS + 1 }, (_, i) => [`l${i}`, "1"])),
          value: 1,
        }],
      })],
      /more than 8 labels/,
    ],
    [[family({ values: [{ labels: {}, value: "1" }] })], /not a number/],
    [[family({ values: [{ labels: {}, value: 1, metricName: "other" }] })], /does not belong/],
    [[family({ values: [{ labels: {}, value: 1, metricName: "x_total_bucket" }] })], /does not belong/],
    [[family({ values: [{ labels: {}, value: 1, exemplar: {} }] })], /unexpected sample field "exemplar"/],
  ];
  for (const [answer, why] of refused) assert.match(checkMetricFamilies(answer) ?? "accepted", why);
});

Deno.test("Buckets keeps a cumulative histogram with its sum and count", () => {
  const b = new Buckets([0.01, 0.1]);
  for (const v of [0.005, 0.01, 0.05, 2]) b.observe(v);
  const s = b.samples("t", { cell: 1 });
  assert.deepEqual(s.map((x) => [x.metricName, x.labels.le, x.value]), [
    ["t_bucket", 0.01, 2],
    ["t_bucket", 0.1, 3],
    ["t_bucket", "+Inf", 4],
    ["t_sum", undefined, 2.065],
    ["t_count", undefined, 4],
  ]);
});
