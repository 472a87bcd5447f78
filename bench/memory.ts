/**
 * `deno task bench memory [--clients=500] [--side=2000] [--seconds=20]`: where our processes' resident memory goes
 * in the peer scene. A local cluster (one cellapp, one baseapp) idle, then loaded with the peer's bots; per process
 * its RSS split into the V8 heap (used, and committed but free), memory JS holds outside the heap (ArrayBuffers),
 * and the rest (the runtime's own: its code and the deno binary, modules, sockets); and, from /proc smaps, how
 * much of the RSS is pages shared with the other processes (the deno binary's text, counted once per process in a
 * sum of RSS). Beside it, what a bare Deno process holds, and what importing each npm package of ours adds to one.
 */
import { parseArgs } from "node:util";
import { runBots } from "../client/bots/mod.ts";
import { registry } from "../entities/mod.ts";
import { json, startBenchCluster } from "./lib/cluster.ts";
import { PEER_WALK } from "./lib/peer_ours.ts";
import { writeResults } from "./results.ts";
import { figure as f, giveUpAfter, numberFlag } from "./lib/run.ts";

const MB = 2 ** 20;
/** The npm packages a server process may load, each measured alone in a bare process. */
const PACKAGES = ["@msgpack/msgpack", "zod", "hono", "@hono/zod-openapi", "prom-client", "saxes", "postgres"];

/** One process's memory at one moment, in MB. */
interface ProcMemory {
  role: string;
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  /** Pages shared with other processes (smaps Shared_Clean + Shared_Dirty). */
  shared: number;
}

/** Reads the heap gauges of every process from the cellappmgr's /metrics, and the shared pages from /proc. */
async function snapshot(admin: string, pids: Map<string, number>): Promise<ProcMemory[]> {
  const text = await (await fetch(`${admin}/metrics`)).text();
  const gauges = new Map<string, Record<string, number>>();
  for (const m of text.matchAll(/^seamless_process_(\w+)_bytes\{role="(\w+)"[^}]*\} (\d+)$/gm)) {
    const g = gauges.get(m[2]) ?? {};
    g[m[1]] = Number(m[3]) / MB;
    gauges.set(m[2], g);
  }
  return [...gauges].map(([role, g]) => ({
    role,
    rss: g.resident_memory,
    heapUsed: g.heap_used,
    heapTotal: g.heap_total,
    external: g.external_memory,
    shared: sharedMB(pids.get(role)),
  }));
}

/** Resident pages of `pid` shared with other processes, in MB (0 when unknown). */
function sharedMB(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const text = Deno.readTextFileSync(`/proc/${pid}/smaps_rollup`);
    let kb = 0;
    for (const m of text.matchAll(/^Shared_(?:Clean|Dirty):\s+(\d+) kB$/gm)) kb += Number(m[1]);
    return kb / 1024;
  } catch {
    return 0;
  }
}

const CONFIG = new URL("../deno.json", import.meta.url).pathname;

/**
 * RSS in MB of a Deno process that imported `packages` (by the names deno.json maps, at its pinned versions) and
 * then idles (read after it printed that it is ready).
 */
async function rssWith(packages: string[]): Promise<number> {
  const code = packages.map((p) => `await import(${JSON.stringify(p)});`).join(" ");
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "--config", CONFIG, `${code} console.log("ready"); setTimeout(() => {}, 60_000);`],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  try {
    const reader = child.stdout.getReader();
    await reader.read();
    reader.releaseLock();
    await new Promise((r) => setTimeout(r, 500));
    const kb = Number(/VmRSS:\s+(\d+)/.exec(Deno.readTextFileSync(`/proc/${child.pid}/status`))![1]);
    return kb / 1024;
  } finally {
    child.kill("SIGKILL");
    await child.status;
  }
}

/** One table row per process, and a total. */
function rows(label: string, procs: ProcMemory[]): string[] {
  const total = (k: keyof Omit<ProcMemory, "role">) => procs.reduce((n, p) => n + p[k], 0);
  const row = (role: string, p: Omit<ProcMemory, "role">) =>
    `| ${label} | ${role} | ${f(p.rss)} | ${f(p.heapUsed)} | ${f(p.heapTotal - p.heapUsed)} | ${f(p.external)} | ${
      f(p.rss - p.heapTotal - p.external)
    } | ${f(p.shared)} |`;
  const sum = {
    rss: total("rss"),
    heapUsed: total("heapUsed"),
    heapTotal: total("heapTotal"),
    external: total("external"),
    shared: total("shared"),
  };
  return [...procs.map((p) => row(p.role, p)), row("**all**", sum)];
}

/** Entry point of `deno task bench memory`. */
export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { clients: { type: "string" }, side: { type: "string" }, seconds: { type: "string" } },
  });
  const clients = numberFlag("clients", values.clients ?? "500", 1, 5000);
  const side = numberFlag("side", values.side ?? "2000", 100, 100_000);
  const seconds = numberFlag("seconds", values.seconds ?? "20", 5, 600);
  const dir = await Deno.makeTempDir({ prefix: "bench-memory-" });
  let pids: number[] = [];
  const done = giveUpAfter("memory", (seconds + 120) * 1000, () => pids);
  try {
    const bare = await rssWith([]);
    // Every server process loads msgpack: the first npm package also brings up Deno's npm resolution.
    const [first, ...rest] = PACKAGES;
    const withFirst = await rssWith([first]);
    const imports: [string, number][] = [[first, withFirst - bare]];
    for (const name of rest) imports.push([name, (await rssWith([first, name])) - withFirst]);
    const cluster = await startBenchCluster(
      [
        `--kv=${dir}/bench.kv`,
        "--cellapps=1",
        "--baseapps=1",
        "--npcs=0",
        "--aoi-radius=100",
        "--log-level=warn",
        "--login-rate=1000",
        "--client-spawn",
      ],
      { cellapps: 1, baseapp: true },
    );
    pids = cluster.processes.map((p) => p.pid);
    const byRole = new Map(cluster.processes.map((p) => [p.role, p.pid]));
    let idle: ProcMemory[] = [], loaded: ProcMemory[] = [];
    try {
      const { id } = await json<{ id: number }>(`${cluster.admin}/api/spaces`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ bounds: [0, 0, side, side], cells: 1, balance: false }),
      });
      await new Promise((r) => setTimeout(r, 2000));
      idle = await snapshot(cluster.admin, byRole);
      await runBots({
        admin: cluster.admin,
        count: clients,
        duration: seconds,
        warmup: 5,
        space: id,
        side,
        ...PEER_WALK,
        observers: 25,
        registry,
        log: (l) => console.error(`memory bench: ${l}`),
        onMeasure: async (phase) => {
          if (phase === "end") loaded = await snapshot(cluster.admin, byRole);
        },
      });
    } finally {
      await cluster.stop();
      pids = [];
    }
    const sharedOnce = Math.max(...loaded.map((p) => p.shared));
    const rssSum = loaded.reduce((n, p) => n + p.rss, 0);
    const md = [
      `Where our resident memory goes in the peer scene (S = ${f(side)} m, ${clients} clients walking as the peer's,`,
      `${seconds} s): each process idle (its space made, no client) and at the end of the loaded window. RSS is split`,
      "into the V8 heap in use, heap committed but free, what JS holds outside the heap (ArrayBuffers), and the rest:",
      "the runtime's own (the deno binary's code, module sources, sockets). Shared is the part of RSS in pages other",
      "processes map too (mostly the deno binary's text): a sum of RSS counts it once per process. MB.",
      "",
      "| when | process | RSS | heap used | heap free | outside the heap | runtime and rest | shared |",
      "|---|---|---:|---:|---:|---:|---:|---:|",
      ...rows("idle", idle),
      ...rows("loaded", loaded),
      "",
      `Loaded, summed RSS: ${f(rssSum)} MB; with the shared pages counted once (all RSS less each process's shared,`,
      `plus the largest shared): ${f(rssSum - loaded.reduce((n, p) => n + p.shared, 0) + sharedOnce)} MB.`,
      "",
      `A bare Deno process (\`deno eval\`) holds ${f(bare)} MB. What importing ${first} adds to it (with Deno's npm`,
      `resolution, which the first npm package brings), and what each other npm package adds to one that has ${first}:`,
      "",
      "| package | MB added |",
      "|---|---:|",
      ...imports.map(([name, mb]) => `| ${name} | ${f(mb, 1)} |`),
    ].join("\n");
    console.log(md);
    await writeResults("memory", md);
  } finally {
    done();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
