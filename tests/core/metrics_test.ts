/** A process's own metric registry: families in the wire shape the cellappmgr renders, without prom-client. */
import assert from "node:assert/strict";
import { MetricRegistry, ProcessMetrics } from "../../core/metrics.ts";
import { checkMetricFamilies } from "../../core/wire/mod.ts";

Deno.test("a registry collects its families in order, each sampled when collected, a name once", () => {
  const r = new MetricRegistry();
  let clients = 2;
  r.sampled("x_clients", "Clients", "gauge", () => [{ labels: {}, value: clients }]);
  r.sampled("x_bytes_total", "Bytes", "counter", () => [
    { labels: { direction: "in" }, value: 5 },
    { labels: { direction: "out" }, value: 7 },
  ]);
  assert.deepEqual(r.collect(), [
    { name: "x_clients", help: "Clients", type: "gauge", values: [{ labels: {}, value: 2 }] },
    {
      name: "x_bytes_total",
      help: "Bytes",
      type: "counter",
      values: [{ labels: { direction: "in" }, value: 5 }, { labels: { direction: "out" }, value: 7 }],
    },
  ]);
  clients = 3;
  assert.equal(r.collect()[0].values[0].value, 3, "read again at each collection");
  assert.throws(() => r.sampled("x_clients", "again", "gauge", () => []), /x_clients is already registered/);
});

Deno.test("counters start at 0 unlabelled, keep one series per label value in first-counted order", () => {
  const r = new MetricRegistry();
  const logins = r.counter("x_logins_total", "Logins");
  const failed = r.counter("x_failed_total", "Failed", ["reason"]);
  assert.deepEqual(r.collect().map((f) => [f.name, f.type, f.values]), [
    ["x_logins_total", "counter", [{ labels: {}, value: 0 }]],
    ["x_failed_total", "counter", []],
  ]);
  failed.inc({ reason: "throttled" }, 0);
  failed.inc({ reason: "refused" });
  failed.inc({ reason: "throttled" });
  failed.inc({ reason: "throttled" }, 2.5);
  logins.inc();
  logins.inc();
  assert.deepEqual(r.collect().map((f) => f.values), [
    [{ labels: {}, value: 2 }],
    [{ labels: { reason: "throttled" }, value: 3.5 }, { labels: { reason: "refused" }, value: 1 }],
  ]);
  assert.throws(() => logins.inc({}, -1), /only goes up/);
  assert.throws(() => failed.inc({} as { reason: string }), /label reason has no value/);
  // What a collection returns is a copy: changing it does not change the counter.
  r.collect()[0].values[0].value = 100;
  assert.equal(r.collect()[0].values[0].value, 2);
});

Deno.test("a histogram's buckets are cumulative, end at +Inf and come with sum and count", () => {
  const r = new MetricRegistry();
  const h = r.histogram("x_commit_seconds", "Commits", [0.001, 0.01, 0.1]);
  const empty = r.collect()[0];
  assert.equal(empty.type, "histogram");
  assert.deepEqual(empty.values.map((s) => s.value), [0, 0, 0, 0, 0, 0], "all series from the start");
  for (const v of [0.0005, 0.001, 0.005, 0.05, 0.05, 3]) h.observe(v);
  const [f] = r.collect();
  assert.deepEqual(f.values.map((s) => [s.metricName, s.labels, s.value]), [
    ["x_commit_seconds_bucket", { le: 0.001 }, 2],
    ["x_commit_seconds_bucket", { le: 0.01 }, 3],
    ["x_commit_seconds_bucket", { le: 0.1 }, 5],
    ["x_commit_seconds_bucket", { le: "+Inf" }, 6],
    ["x_commit_seconds_sum", {}, 3.1065],
    ["x_commit_seconds_count", {}, 6],
  ]);
  assert.equal(checkMetricFamilies(r.collect()), null, "the cellappmgr takes it");
});

Deno.test("a process's metrics are its resident memory, heap, memory outside the heap and event-loop delay", () => {
  const m = new ProcessMetrics();
  try {
    const families = m.families();
    assert.deepEqual(families.map((f) => [f.name, f.type, f.values.length]), [
      ["seamless_process_resident_memory_bytes", "gauge", 1],
      ["seamless_process_heap_used_bytes", "gauge", 1],
      ["seamless_process_heap_total_bytes", "gauge", 1],
      ["seamless_process_external_memory_bytes", "gauge", 1],
      ["seamless_event_loop_delay_seconds", "gauge", 3],
    ]);
    const [rss, used, total, external] = families.map((f) => f.values[0].value);
    assert.ok(rss > 10e6, "resident memory in bytes");
    assert.ok(used > 0 && total >= used && rss > total, `heap used ${used} ≤ committed ${total} < RSS ${rss}`);
    assert.ok(external > 0, "ArrayBuffers outside the heap");
  } finally {
    m.close();
  }
});

interface GraphModule {
  specifier: string;
  npmPackage?: string;
  dependencies?: { code?: { specifier: string }; isDynamic?: boolean }[];
}
interface Graph {
  modules: GraphModule[];
  npmPackages: Record<string, { name: string; dependencies: string[] }>;
  redirects: Record<string, string>;
}

/**
 * The npm packages a process of `role` can load from main.ts: every import
 * that runs code (type-only imports do not), static or lazy, except the
 * other roles' parts that cli/roles.ts imports only for their own role.
 */
function npmPackagesOf(graph: Graph, role: "cellappmgr" | "cellapp" | "baseapp"): Map<string, string> {
  const root = new URL("../../", import.meta.url).href;
  const parts = { cellappmgr: ["mgr/mod.ts", "admin/mod.ts"], cellapp: ["cell/mod.ts"], baseapp: ["base/mod.ts"] };
  const lazyRoles = Object.values(parts).flat().map((p) => root + p);
  const own = parts[role].map((p) => root + p);
  const modules = new Map(graph.modules.map((m) => [m.specifier, m]));
  // Each module reached, with the chain of imports that reached it (for the failure message).
  const via = new Map<string, string>([[root + "main.ts", "main.ts"]]);
  const packages = new Map<string, string>();
  const todo = [root + "main.ts"];
  for (let at = todo.pop(); at !== undefined; at = todo.pop()) {
    const m = modules.get(at);
    if (m?.npmPackage) {
      const pkgs = [m.npmPackage];
      for (let p = pkgs.pop(); p !== undefined; p = pkgs.pop()) {
        const pkg = graph.npmPackages[p];
        if (!pkg || packages.has(pkg.name)) continue;
        packages.set(pkg.name, via.get(at)!);
        pkgs.push(...pkg.dependencies);
      }
    }
    for (const d of m?.dependencies ?? []) {
      const code = d.code?.specifier;
      const to = code === undefined ? undefined : graph.redirects[code] ?? code;
      if (to === undefined || via.has(to)) continue;
      if (d.isDynamic && lazyRoles.includes(to) && !own.includes(to)) continue;
      via.set(to, `${via.get(at)} > ${to.replace(root, "")}`);
      todo.push(to);
    }
  }
  for (const p of own) assert.ok(via.has(p), `${p} is loaded by a ${role}: cli/roles.ts changed how roles are loaded`);
  return packages;
}

Deno.test("cellapps and baseapps never load prom-client: only the cellappmgr, which renders the text", async () => {
  const info = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "main.ts"],
    cwd: new URL("../../", import.meta.url),
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(info.code, 0, new TextDecoder().decode(info.stderr));
  const graph = JSON.parse(new TextDecoder().decode(info.stdout)) as Graph;
  assert.ok(npmPackagesOf(graph, "cellappmgr").has("prom-client"), "the walk finds what the cellappmgr loads");
  for (const role of ["cellapp", "baseapp"] as const) {
    const through = npmPackagesOf(graph, role).get("prom-client");
    assert.equal(through, undefined, `a ${role} loads prom-client through ${through}`);
  }
});
