/**
 * `deno task bench peer [--clients=500] [--seconds=30] [--side=2000,400] [--ours-only]`: the Colyseus peer's
 * scenario (docs/benchmarks.md: clients walking at 5 m/s in a square of side S, 10 moves/s in 10
 * send groups, a counter raised every 5 s, AoI 100 m, 10 Hz, measured after a 5 s warm-up) against a local
 * cluster of one cellapp and one baseapp with one space of S × S in one cell; then, when the peer folder is
 * there, against Colyseus (installed with npm into a temporary folder) in the same run. Prints and records
 * both side by side: CPU per client-second (every process of our cluster summed, from /proc, as the peer reads
 * its server), bytes per client-second, p99 move-to-seen latency, resident memory, and the ratios.
 */
import { parseArgs } from "node:util";
import { runBots } from "../client/bots/mod.ts";
import { registry } from "../entities/mod.ts";
import type { SpaceView } from "../core/views.ts";
import { json, startBenchCluster } from "./lib/cluster.ts";
import { cpuSeconds, machineBusySeconds, ProcessWindow, selfAndReapedSeconds } from "./lib/procs.ts";
import { type InstalledPeer, installPeer, peerFolder, type PeerResult, runPeer } from "./lib/colyseus.ts";
import { writeResults } from "./results.ts";
import { figure as f, giveUpAfter, numberFlag } from "./lib/run.ts";
import { type Breakdown, breakDown, type Sighting } from "./lib/trace.ts";
import { traceSampled } from "../core/trace.ts";

/** The peer's fixed parameters (README "Scenario"). */
const WARMUP = 5, OBSERVERS = 25, AOI = 100;

/** Processes of the cluster running now: killed by pid if the run passes its time limit. */
let running: number[] = [];

/** Our figures for one scene. */
interface Ours {
  connected: number;
  cpuMsPerClientSec: number;
  /** Share of one core per role. */
  cores: Record<string, number>;
  bytesPerClientSec: number;
  p50: number | null;
  p99: number | null;
  rssMB: number;
  /** Peak resident MB per role. */
  rssByRole: Record<string, number>;
  botCpuPct: number;
  tickP99: number | null;
  errors: number;
  /** Share of one core the rest of the machine used during the window (other work disturbs the figures). */
  otherCores: number;
  /** Where the time between a move and its first sighting went, from the sampled moves' traces. */
  breakdown: Breakdown | null;
}

/** One entity id in this many has its moves traced through the servers (core/trace.ts). */
const TRACE_EVERY = 5;

async function runOurs(clients: number, seconds: number, side: number, dir: string): Promise<Ours> {
  // The cluster's processes inherit the environment: they trace the sampled moves into this folder.
  const traceDir = `${dir}/trace-${side}`;
  await Deno.mkdir(traceDir, { recursive: true });
  Deno.env.set("SEAMLESS_TRACE_DIR", traceDir);
  Deno.env.set("SEAMLESS_TRACE_EVERY", String(TRACE_EVERY));
  const sightings: Sighting[] = [];
  const cluster = await startBenchCluster(
    [
      `--kv=${dir}/bench.kv`,
      "--cellapps=1",
      "--baseapps=1",
      "--npcs=0",
      `--aoi-radius=${AOI}`,
      "--log-level=warn",
      "--login-rate=1000", // every bot logs in from this one host
      "--client-spawn", // each bot asks for its spawn point, as the peer's join options give it
    ],
    { cellapps: 1, baseapp: true },
  ).finally(() => {
    Deno.env.delete("SEAMLESS_TRACE_DIR");
    Deno.env.delete("SEAMLESS_TRACE_EVERY");
  });
  try {
    const { id } = await json<{ id: number }>(`${cluster.admin}/api/spaces`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ bounds: [0, 0, side, side], cells: 1, balance: false }),
    });
    const roles = new Map<number, string>(cluster.processes.map((p) => [p.pid, p.role]));
    const pids = cluster.processes.map((p) => p.pid);
    running = pids;
    const window = new ProcessWindow(pids);
    let bot0 = 0,
      botCpu = 0,
      busy0 = 0,
      otherCores = 0,
      measured: ReturnType<ProcessWindow["end"]> | null = null,
      tickP99: number | null = null;
    const report = await runBots({
      admin: cluster.admin,
      count: clients,
      duration: seconds,
      warmup: WARMUP,
      space: id,
      side,
      speed: 5,
      moveHz: 10,
      propEvery: 5,
      observers: OBSERVERS,
      walk: "peer",
      registry,
      log: (l) => console.error(`peer bench (ours, S=${side}): ${l}`),
      onSighting: (id, x, sentAt, seenAt) => {
        if (!traceSampled(id, TRACE_EVERY)) return;
        const o = performance.timeOrigin;
        sightings.push({ id, x, sentAt: o + sentAt, seenAt: o + seenAt });
      },
      onMeasure: async (phase) => {
        if (phase === "start") {
          window.begin();
          bot0 = cpuSeconds(Deno.pid) ?? 0;
          busy0 = machineBusySeconds();
        } else {
          measured = window.end();
          botCpu = ((cpuSeconds(Deno.pid) ?? 0) - bot0) / measured.seconds;
          const ours = [...measured.cores.values()].reduce((n: number, c) => n + (c ?? 0), 0);
          otherCores = Math.max(0, (machineBusySeconds() - busy0) / measured.seconds - ours - botCpu);
          const space = await json<SpaceView>(`${cluster.admin}/api/spaces/${id}`);
          tickP99 = Math.max(...space.cells.map((c) => c.tickMsP99));
        }
      },
    });
    const m = measured as ReturnType<ProcessWindow["end"]> | null;
    if (!m) throw new Error("the bots never ended their measurement");
    const cores: Record<string, number> = {}, rssByRole: Record<string, number> = {};
    let total = 0;
    for (const [pid, share] of m.cores) {
      const role = roles.get(pid) ?? "other";
      cores[role] = (cores[role] ?? 0) + (share ?? 0);
      rssByRole[role] = (rssByRole[role] ?? 0) + (m.peakRssByPid.get(pid) ?? 0);
      total += share ?? 0;
    }
    const connected = report.connected;
    // The servers write their notes once a second: the last ones are in once a second has passed.
    await new Promise((r) => setTimeout(r, 1200));
    const breakdown = breakDown(traceDir, sightings);
    return {
      connected,
      cpuMsPerClientSec: connected ? (total * 1000) / connected : NaN,
      cores,
      bytesPerClientSec: report.bytesPerClientPerSec,
      p50: report.latencyP50Ms,
      p99: report.latencyP99Ms,
      rssMB: m.peakRssMB,
      rssByRole,
      botCpuPct: botCpu * 100,
      tickP99,
      otherCores,
      errors: report.errors + (connected < clients ? 1 : 0),
      breakdown,
    };
  } finally {
    await cluster.stop();
    running = [];
  }
}

const ratio = (a: number | null | undefined, b: number | null | undefined) =>
  a === null || a === undefined || !b ? "n/a" : (a / b).toFixed(2);

/** One scene's figures; `peerOther`: share of a core the rest of the machine used during the peer's whole run. */
interface Row {
  side: number;
  ours: Ours;
  peer: PeerResult | null;
  peerOther: number | null;
}

function table(clients: number, rows: Row[]): string {
  const head = [
    "| scene | ours: CPU ms per client-s | Colyseus | ratio | ours: bytes per client-s | Colyseus | ratio |" +
    " ours: p99 move-to-seen | Colyseus | ours: RSS MB (all processes) | Colyseus server | ratio |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ];
  const body = rows.map(({ side, ours, peer }) => {
    const pc = peer?.serverCpuSecPerClientPerSec ? peer.serverCpuSecPerClientPerSec * 1000 : null;
    return `| S = ${f(side)} m, ${clients} clients | ${f(ours.cpuMsPerClientSec, 3)} | ${f(pc, 3)} | ${
      ratio(ours.cpuMsPerClientSec, pc)
    } | ${f(ours.bytesPerClientSec)} | ${f(peer?.bytesPerClientPerSec)} | ${
      ratio(ours.bytesPerClientSec, peer?.bytesPerClientPerSec)
    } | ${f(ours.p99, 1, " ms")} | ${f(peer?.latencyP99Ms, 1, " ms")} | ${f(ours.rssMB)} | ${f(peer?.serverRssMB)} | ${
      ratio(ours.rssMB, peer?.serverRssMB)
    } |`;
  });
  const detail = [
    "",
    "| scene | ours: CPU per process (one core = 100 %) | ours: peak RSS per process | ours: cell tick p99 | ours: p50 | Colyseus p50 |" +
    " connected ours / Colyseus | bot process CPU ours / Colyseus | errors ours / Colyseus |" +
    " other work on the machine ours / Colyseus |",
    "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ...rows.map(({ side, ours, peer, peerOther }) =>
      `| S = ${f(side)} m | ${
        Object.entries(ours.cores).sort((a, b) => b[1] - a[1]).map(([r, c]) => `${r} ${f(c * 100, 1)} %`).join(", ")
      } | ${
        Object.entries(ours.rssByRole).sort((a, b) => b[1] - a[1]).map(([r, v]) => `${r} ${f(v)} MB`).join(", ")
      } | ${f(ours.tickP99, 1, " ms")} | ${f(ours.p50, 1, " ms")} | ${
        f(peer?.latencyP50Ms, 1, " ms")
      } | ${ours.connected} / ${peer?.connected ?? "n/a"} | ${f(ours.botCpuPct, 0, " %")} / ${
        f(peer?.botCpuPct, 0, " %")
      } | ${ours.errors} / ${peer?.errors ?? "n/a"} | ${f(ours.otherCores * 100, 0, " %")} / ${
        f(peerOther === null ? null : peerOther * 100, 0, " %")
      } |`
    ),
  ];
  return [...head, ...body, ...detail, ...hops(rows)].join("\n");
}

/** Where our move-to-seen time goes, per hop, from the traced sample of moves (see bench/lib/trace.ts). */
function hops(rows: Row[]): string[] {
  const traced = rows.filter((r) => r.ours.breakdown);
  if (traced.length === 0) return ["", "No move could be traced through every hop: no breakdown."];
  const names = traced[0].ours.breakdown!.hops.map((h) => h.hop);
  return [
    "",
    `Where our move-to-seen time goes: the moves of about one bot in ${TRACE_EVERY} (by a hash of its id), traced through the servers (each`,
    "process notes when a sampled move passes it; one machine, one clock), p50 / p99 of each hop, and its mean in",
    "the slowest 1 % of moves.",
    "",
    `| scene | traced moves | ${names.join(" | ")} | whole way |`,
    `|---|---:|${names.map(() => "---:").join("|")}|---:|`,
    ...traced.map(({ side, ours }) => {
      const b = ours.breakdown!;
      return `| S = ${f(side)} m | ${f(b.traced)} of ${f(b.sightings)} | ${
        b.hops.map((h) => `${f(h.p50, 1)} / ${f(h.p99, 1)} (slowest: ${f(h.slowMean, 1)})`).join(" | ")
      } | ${f(b.total.p50, 1)} / ${f(b.total.p99, 1)} ms |`;
    }),
  ];
}

/** Runs the benchmark and writes its section of bench/RESULTS.md. */
export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      clients: { type: "string", default: "500" },
      seconds: { type: "string", default: "30" },
      side: { type: "string", default: "2000,400" },
      "ours-only": { type: "boolean" },
    },
  });
  const clients = numberFlag("clients", values.clients, 1, 5000);
  const seconds = numberFlag("seconds", values.seconds, 1, 600);
  const sides = values.side.split(",").map((s) => numberFlag("side", s, 100, 100_000));
  if (sides.length > 2) throw new Error("--side: at most two scenes, e.g. 2000,400");
  const log = (l: string) => console.error(`peer bench: ${l}`);
  const from = values["ours-only"] ? null : peerFolder();
  const note = values["ours-only"]
    ? "Colyseus not run (--ours-only): our figures alone."
    : from
    ? ""
    : "The peer folder ../shared/peers/colyseus is not there: our figures alone.";
  if (note) log(note);
  // The whole run is bounded: per scene, logins (up to 90 s), warm-up, window, peer install and run, stops.
  const limitMs = sides.length * (2 * (90 + WARMUP + seconds + 90)) * 1000 + 300_000;
  const stopWatch = giveUpAfter("peer", limitMs, () => running);
  const dir = await Deno.makeTempDir({ prefix: "bench-peer-" });
  let peer: InstalledPeer | null = null;
  try {
    if (from) peer = await installPeer(from, log);
    const rows: Row[] = [];
    for (const side of sides) {
      log(`S = ${side} m: our cluster, ${clients} clients`);
      const ours = await runOurs(clients, seconds, side, dir);
      let theirs: PeerResult | null = null, peerOther: number | null = null;
      if (peer) {
        log(`S = ${side} m: Colyseus, ${clients} clients`);
        const busy0 = machineBusySeconds(), own0 = selfAndReapedSeconds(), t0 = performance.now();
        theirs = await runPeer(peer, { clients, seconds, side, warmup: WARMUP, observers: OBSERVERS });
        const s = (performance.now() - t0) / 1000;
        peerOther = Math.max(0, (machineBusySeconds() - busy0 - (selfAndReapedSeconds() - own0)) / s);
      }
      rows.push({ side, ours, peer: theirs, peerOther });
    }
    const version = rows.find((r) => r.peer)?.peer?.version;
    const md = [
      `The Colyseus peer's scenario (\`../shared/peers/colyseus\`, README): ${clients} clients walking at 5 m/s in a`,
      `square of side S (a 2 % chance per step of a new heading), 10 moves/s in 10 send groups, a counter raised`,
      `every 5 s, AoI ${AOI} m, 10 Hz; ${seconds} s measured after a ${WARMUP} s warm-up; ${OBSERVERS} bots decode and`,
      "measure latency (first sighting of a move by any of them), the others count bytes. Ours: a cluster",
      "(cellappmgr, one cellapp, one baseapp, no NPCs; each process started directly, as a deployment runs them,",
      "without `deno task start`'s parent) with one space of S × S in one cell; CPU and resident memory are every",
      `process of it summed (/proc utime + stime over the window; VmRSS sampled each second). ${
        version ? `Colyseus ${version} (aoi variant, its server process), run right after ours.` : note
      } All on this machine, loopback only; the bots of each side run in one process.`,
      "The last column is the CPU the rest of the machine used meanwhile (share of one core; for Colyseus over its",
      "whole run, joins included): above a few per cent, other work disturbed the figures.",
      "",
      table(clients, rows),
    ].join("\n");
    console.log(md);
    await writeResults("peer", md);
  } finally {
    stopWatch();
    await peer?.remove();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
