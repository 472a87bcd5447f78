/**
 * `deno task bench fuzz [--count N] [--seed S]`: the fuzz test's run at full
 * size against a local cluster (cellappmgr, one cellapp, one baseapp, with a
 * cluster secret): inputs per second into each kind of port, and each
 * process's resident memory before and after.
 */
import { parseArgs } from "node:util";
import { runFuzz } from "../tools/fuzz/mod.ts";
import type { ClusterView } from "../core/views.ts";
import { json, startBenchCluster } from "./lib/cluster.ts";
import { writeResults } from "./results.ts";

/** Runs the benchmark and records its figures. */
export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { count: { type: "string", default: "100000" }, seed: { type: "string", default: "20261123" } },
  });
  const count = Number(values.count), seed = Number(values.seed);
  const secret = "bench-fuzz-secret";
  const cluster = await startBenchCluster(
    [
      "--kv=:memory:",
      "--cellapps=1",
      "--npcs=100",
      `--secret=${secret}`,
      "--abuse-limit=1000000000",
      "--login-rate=1000",
      "--log-level=error",
    ],
    { cellapps: 1, baseapp: true },
  );
  try {
    const c = await json<ClusterView>(`${cluster.admin}/api/cluster`);
    const targets = c.processes.map((p) => ({ name: p.role, address: p.address, pid: p.pid }));
    const clientUrl = c.processes.find((p) => p.clientUrl)!.clientUrl!;
    const t0 = performance.now();
    const r = await runFuzz({ targets, clientUrl, secret, seed, count, deadlineMs: 600_000 });
    const seconds = (performance.now() - t0) / 1000;
    const alive = await json<ClusterView>(`${cluster.admin}/api/cluster`);
    const mib = (b: number) => (b / 2 ** 20).toFixed(0);
    const lines = [
      `${count} inputs to each port and ${count} client messages, seed ${seed}, all at once, in ${
        seconds.toFixed(0)
      } s; ` +
      `afterwards ${alive.processes.length} of ${c.processes.length} processes still registered.`,
      "",
      "| target | inputs | inputs/s | connections | dropped by the process |",
      "| --- | ---: | ---: | ---: | ---: |",
      ...r.totals.map((t) =>
        `| ${t.name} | ${t.inputs} | ${Math.round(t.inputs / t.ms * 1000)} | ${t.connections ?? "-"} | ${
          t.dropped ?? "-"
        } |`
      ),
      "",
      "| process | RSS before | after half | after all |",
      "| --- | ---: | ---: | ---: |",
      ...[...r.rss].map(([name, [a, b, e]]) => `| ${name} | ${mib(a)} MiB | ${mib(b)} MiB | ${mib(e)} MiB |`),
      "",
      "Each input is known to have been read: frames after the handshake go in batches closed by a ping, and a batch " +
      "whose connection the process dropped is replayed one frame per connection.",
    ];
    console.log(lines.join("\n"));
    await writeResults("fuzz", lines.join("\n"));
  } finally {
    await cluster.stop();
  }
}
