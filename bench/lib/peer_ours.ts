/** Our side of `deno task bench peer`: one scene of the peer's scenario against a fresh local cluster. */
import { runBots } from "../../client/bots/mod.ts";
import { registry } from "../../entities/mod.ts";
import type { SpaceView } from "../../core/views.ts";
import { traceSampled } from "../../core/trace.ts";
import { json, startBenchCluster } from "./cluster.ts";
import { cpuSeconds, machineBusySeconds, ProcessWindow } from "./procs.ts";
import { type Breakdown, breakDown, type Sighting } from "./trace.ts";

/** The peer's fixed parameters (README "Scenario"). */
export const WARMUP = 5, OBSERVERS = 25, AOI = 100;

/** How the peer scenario's clients walk (README "Scenario"): 5 m/s, 10 moves a second, a counter raised every 5 s. */
export const PEER_WALK = { speed: 5, moveHz: 10, propEvery: 5, walk: "peer" } as const;

/** Our figures for one scene. */
export interface Ours {
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
export const TRACE_EVERY = 5;

/**
 * Runs the peer's scene against a fresh cluster of ours: `side` metres, `clients` bots, `seconds` measured; `running`
 * is told the cluster's pids while it runs (the caller kills them if the run passes its limit) and [] after.
 */
export async function runOurs(
  clients: number,
  seconds: number,
  side: number,
  dir: string,
  running: (pids: number[]) => void,
): Promise<Ours> {
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
    running(pids);
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
      ...PEER_WALK,
      observers: OBSERVERS,
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
    running([]);
  }
}
