/**
 * `deno task bench players [--count=200] [--duration=30] [--warmup=5] [--json]`: end to end on a local cluster
 * (started here on free ports, Deno KV in a temporary file): N bots log in, walk and raise their counters (the
 * `deno task bots` scenario with its defaults); reports the baseapp's and cellapps' CPU during the measurement,
 * bytes per client per second, and the time from a bot's move to another bot seeing it (p50, p99).
 */
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { runBots } from "../client/bots/mod.ts";
import { registry } from "../entities/mod.ts";
import { parseReady, splitLines } from "../cli/local_cluster.ts";
import type { ClusterView } from "../core/views.ts";
import { writeResults } from "./results.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = l.addr.port;
  l.close();
  return port;
}

/** CPU seconds (user + system) a process has used, from /proc; null where there is none. */
function cpuSeconds(pid: number): number | null {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
  } catch {
    return null;
  }
}

async function startCluster(dir: string): Promise<{ child: Deno.ChildProcess; admin: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--config",
      `${ROOT}deno.json`,
      `${ROOT}main.ts`,
      `--port=${freePort()}`,
      `--admin-port=${freePort()}`,
      `--kv=${dir}/bench.kv`,
      "--log-level=warn",
      // Every bot logs in from this one host.
      "--login-rate=1000",
      // The bots spread over the default space, each where it asks to be.
      "--client-spawn",
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).pipeThrough(splitLines()).getReader();
  for (;;) {
    const { value, done } = await lines.read();
    if (done) throw new Error("the local cluster exited before it was ready");
    const ready = parseReady(value);
    if (ready?.admin) {
      (async () => {
        while (!(await lines.read()).done) { /* drain */ }
      })().catch(() => {});
      return { child, admin: ready.admin };
    }
  }
}

/** Runs the benchmark and writes its section of bench/RESULTS.md. */
export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      count: { type: "string", default: "200" },
      duration: { type: "string", default: "30" },
      warmup: { type: "string", default: "5" },
      json: { type: "boolean" },
    },
  });
  const count = Number(values.count), duration = Number(values.duration), warmup = Number(values.warmup);
  const dir = await Deno.makeTempDir({ prefix: "bench-players-" });
  const { child, admin } = await startCluster(dir);
  try {
    let procs: ClusterView["processes"] = [];
    for (let i = 0; i < 100 && !procs.some((p) => p.role === "baseapp" && p.clientUrl); i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 100));
      procs = ((await (await fetch(`${admin}/api/cluster`)).json()) as ClusterView).processes
        .filter((p) => p.role !== "cellappmgr");
    }
    const cpu0 = new Map<number, number | null>();
    const cpu = new Map<number, number | null>();
    let t0 = 0, seconds = 0;
    const report = await runBots({
      admin,
      count,
      duration,
      warmup,
      registry,
      log: (l) => console.error(`players: ${l}`),
      onMeasure: (phase) => {
        if (phase === "start") {
          t0 = performance.now();
          for (const p of procs) cpu0.set(p.pid, cpuSeconds(p.pid));
        } else {
          seconds = (performance.now() - t0) / 1000;
          for (const p of procs) {
            const a = cpu0.get(p.pid), b = cpuSeconds(p.pid);
            cpu.set(p.pid, a === null || a === undefined || b === null ? null : (b - a) / seconds);
          }
        }
      },
    });
    const share = (role: string) =>
      procs.filter((p) => p.role === role).map((p) => {
        const v = cpu.get(p.pid);
        return v === null || v === undefined ? "n/a" : `${(v * 100).toFixed(0)}%`;
      }).join(" + ");
    const rows = [
      ["bots (connected / started)", `${report.connected} / ${report.clients}`],
      ["measured", `${report.seconds} s after ${warmup} s warm-up`],
      ["baseapp CPU (one core = 100%)", share("baseapp")],
      ["cellapp CPU", share("cellapp")],
      ["bytes per client per second", String(report.bytesPerClientPerSec)],
      ["updates per client per second", String(report.updatesPerClientPerSec)],
      [
        "move seen by another bot, p50 / p99",
        `${report.latencyP50Ms ?? "n/a"} ms / ${report.latencyP99Ms ?? "n/a"} ms`,
      ],
      ["enters / leaves / property events", `${report.enters} / ${report.leaves} / ${report.propertyEvents}`],
      ["out of order / gaps / errors", `${report.outOfOrder} / ${report.gaps} / ${report.errors}`],
    ];
    const md = [
      `${count} bots of \`deno task bots\` (speed 5 m/s, 10 moves/s, counter every 5 s, spawned over the default`,
      "space) against the local cluster (`deno task start`: cellappmgr, 2 cellapps, 1 baseapp, its NPCs), all on",
      "this machine; the bots run in the benchmark's process.",
      "",
      "| figure | value |",
      "| --- | --- |",
      ...rows.map(([k, v]) => `| ${k} | ${v} |`),
    ].join("\n");
    if (values.json) console.log(JSON.stringify({ ...report, cpu: Object.fromEntries(cpu) }));
    else console.log(md);
    await writeResults("players", md);
  } finally {
    try {
      child.kill("SIGTERM");
    } catch {
      // already gone
    }
    await child.status;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
