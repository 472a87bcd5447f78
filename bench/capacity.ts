/**
 * `deno task bench capacity [--clients=1250] [--seconds=20] [--observers=25] [--baseapps=2]`: how many clients ONE
 * cellapp holds at 10 Hz with its tick p99 under the 100 ms budget, and how the servers' CPU per client-second grows
 * along the steps (`--clients=250,500,1000,1250 --baseapps=1` draws the curve). Per step (`--clients=500,1250,2000` runs three)
 * a local cluster of one cellapp and `--baseapps` baseapps, one space of one cell of side
 * S = 2,000 m × √(clients / 500) (the density of the Colyseus peer scene at S = 2,000 m), AoI 100 m, and the light
 * bots of `deno task bots` walking as the peer's do (--walk peer), a few of them decoding and measuring
 * move-to-seen latency, the rest counting bytes. Records in bench/RESULTS.md the cell's tick times over the
 * window (from the cellapp's tick histogram, /metrics), whether the budget held, CPU per process (bots included)
 * and what the clients saw.
 */
import { parseArgs } from "node:util";
import { runBots } from "../client/bots/mod.ts";
import { registry } from "../entities/mod.ts";
import type { ClusterView, SpaceView } from "../core/views.ts";
import { json, startBenchCluster } from "./lib/cluster.ts";
import { cpuSeconds, machineBusySeconds, ProcessWindow } from "./lib/procs.ts";
import { readTickBuckets, type TickBuckets, type TickWindow, tickWindow } from "./lib/tick_window.ts";
import { writeResults } from "./results.ts";
import { PEER_WALK } from "./lib/peer_ours.ts";
import { figure as f, giveUpAfter, numberFlag } from "./lib/run.ts";

const WARMUP = 5, AOI = 100, TICK_HZ = 10, BUDGET_MS = 1000 / TICK_HZ;

/** The side (m) of the square that holds `clients` at the density of 500 clients in 2,000 m × 2,000 m. */
export function sideFor(clients: number): number {
  return Math.round(2000 * Math.sqrt(clients / 500));
}

/** Processes of the cluster running now: killed by pid if the run passes its time limit. */
let running: number[] = [];

/** One step's figures. */
interface Step {
  clients: number;
  side: number;
  connected: number;
  tick: TickWindow;
  /** From the cell's own ring of its last 128 ticks, read every few seconds: median p50, worst p99, lowest rate. */
  ringP50: number | null;
  ringP99: number | null;
  tickRate: number | null;
  /** Share of one core per process, by role (baseapps numbered). */
  cores: Record<string, number>;
  botCore: number;
  movesPerClientSec: number;
  bytesPerClientSec: number;
  p50: number | null;
  p99: number | null;
  errors: number;
  otherCores: number;
  /** Share of all the machine's cores busy over the window (ours, the bots' and other work). */
  machineBusy: number;
}

async function waitForBaseapps(admin: string, n: number): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const c = await json<ClusterView>(`${admin}/api/cluster`);
    if (c.processes.filter((p) => p.role === "baseapp" && p.clientUrl).length >= n) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the local cluster did not register ${n} baseapps with a client URL in 30 s`);
}

async function runStep(
  clients: number,
  seconds: number,
  observers: number,
  baseapps: number,
  log: (l: string) => void,
): Promise<Step> {
  const side = sideFor(clients);
  const cluster = await startBenchCluster(
    [
      "--kv=:memory:", // two baseapps on one file contend for its lock (logouts fail with "database is locked")
      "--cellapps=1",
      `--baseapps=${baseapps}`,
      "--npcs=0",
      `--tick-hz=${TICK_HZ}`,
      `--aoi-radius=${AOI}`,
      "--log-level=warn",
      "--login-rate=1000", // every bot logs in from this one host
      "--client-spawn", // each bot asks for its spawn point
    ],
    { cellapps: 1, baseapp: true },
  );
  try {
    await waitForBaseapps(cluster.admin, baseapps);
    const { id } = await json<{ id: number }>(`${cluster.admin}/api/spaces`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ bounds: [0, 0, side, side], cells: 1, balance: false }),
    });
    const names = new Map<number, string>();
    let nBase = 0;
    for (const p of (await json<ClusterView>(`${cluster.admin}/api/cluster`)).processes) {
      names.set(p.pid, p.role === "baseapp" && baseapps > 1 ? `baseapp ${++nBase}` : p.role);
    }
    const pids = cluster.processes.map((p) => p.pid);
    running = pids;
    const window = new ProcessWindow(pids);
    let bot0 = 0, busy0 = 0, before: TickBuckets = new Map();
    let measured: ReturnType<ProcessWindow["end"]> | null = null, botCore = 0, otherCores = 0, machineBusy = 0;
    let tick: TickWindow | null = null;
    const ring: { p50: number; p99: number; rate: number }[] = [];
    let sampler: ReturnType<typeof setInterval> | undefined;
    const sample = async () => {
      const c = (await json<SpaceView>(`${cluster.admin}/api/spaces/${id}`)).cells[0];
      if (c) ring.push({ p50: c.tickMsP50, p99: c.tickMsP99, rate: c.tickRate });
    };
    const report = await runBots({
      admin: cluster.admin,
      count: clients,
      duration: seconds,
      warmup: WARMUP,
      space: id,
      side,
      ...PEER_WALK,
      observers,
      registry,
      log: (l) => log(`${clients} clients: ${l}`),
      onMeasure: async (phase) => {
        if (phase === "start") {
          before = await readTickBuckets(cluster.admin, id);
          window.begin();
          bot0 = cpuSeconds(Deno.pid) ?? 0;
          busy0 = machineBusySeconds();
          // The ring holds the last 128 ticks (12.8 s at 10 Hz): read often enough that no stretch goes unseen.
          sampler = setInterval(() => sample().catch(() => {}), 5000);
        } else {
          clearInterval(sampler);
          measured = window.end();
          botCore = ((cpuSeconds(Deno.pid) ?? 0) - bot0) / measured.seconds;
          const ours = [...measured.cores.values()].reduce((n: number, c) => n + (c ?? 0), 0);
          const busy = (machineBusySeconds() - busy0) / measured.seconds;
          otherCores = Math.max(0, busy - ours - botCore);
          machineBusy = busy / navigator.hardwareConcurrency;
          tick = tickWindow(before, await readTickBuckets(cluster.admin, id), BUDGET_MS);
          await sample();
        }
      },
    });
    const m = measured as ReturnType<ProcessWindow["end"]> | null;
    const t = tick as TickWindow | null;
    if (!m || !t) throw new Error("the bots never ended their measurement");
    const cores: Record<string, number> = {};
    for (const [pid, share] of m.cores) {
      const role = names.get(pid) ?? "other";
      cores[role] = (cores[role] ?? 0) + (share ?? 0);
    }
    const sorted = ring.map((r) => r.p50).sort((a, b) => a - b);
    return {
      clients,
      side,
      connected: report.connected,
      tick: t,
      ringP50: sorted.length ? sorted[Math.floor(sorted.length / 2)] : null,
      ringP99: ring.length ? Math.max(...ring.map((r) => r.p99)) : null,
      tickRate: ring.length ? Math.min(...ring.map((r) => r.rate)) : null,
      cores,
      botCore,
      movesPerClientSec: report.movesPerClientPerSec,
      bytesPerClientSec: report.bytesPerClientPerSec,
      p50: report.latencyP50Ms,
      p99: report.latencyP99Ms,
      errors: report.errors,
      otherCores,
      machineBusy,
    };
  } finally {
    await cluster.stop();
    running = [];
  }
}

/** Whether the tick p99 stayed within the budget: at most 1 % of the window's ticks over it. */
export function budgetMet(t: TickWindow): boolean {
  return t.ticks > 0 && t.overBudget <= 0.01 * t.ticks;
}

/** CPU ms per client-second of the cellapp and the baseapps together (not the cellappmgr, not the bots). */
export function serverMsPerClientSec(cores: Record<string, number>, connected: number): number | null {
  if (connected === 0) return null;
  const sum = Object.entries(cores).filter(([r]) => r === "cellapp" || r.startsWith("baseapp"))
    .reduce((n, [, c]) => n + c, 0);
  return sum * 1000 / connected;
}

/**
 * How the servers' cost per client grows along the steps: each step's figure against the first step's, and the
 * largest growth (a fraction: 0.1 is 10 % more per client). Null with fewer than two steps that have a figure.
 */
export function costGrowth(steps: { clients: number; msPerClientSec: number | null }[]): number | null {
  const known = steps.filter((s) => s.msPerClientSec !== null && s.msPerClientSec > 0);
  if (known.length < 2) return null;
  const first = known[0].msPerClientSec!;
  return Math.max(...known.slice(1).map((s) => s.msPerClientSec! / first - 1));
}

function table(steps: Step[]): string {
  const pct = (v: number | undefined) => f((v ?? 0) * 100, 0, " %");
  return [
    "| clients (connected) | S | cell tick p50 / p99 (last 128 ticks, worst read) | histogram: p99 ≤, max ≤ |" +
    " ticks over 100 ms | budget met | tick rate | cellapp CPU | baseapps CPU | cellapp + baseapps, ms per client-s |" +
    " bot process CPU (ms per client-s) |" +
    " moves per client-s | p50 / p99 move-to-seen | errors | other work | machine busy |",
    "|---|---:|---:|---:|---:|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ...steps.map((s) => {
      const bases = Object.entries(s.cores).filter(([r]) => r.startsWith("baseapp")).map(([, c]) => pct(c));
      return `| ${f(s.clients)} (${f(s.connected)}) | ${f(s.side)} m | ${f(s.ringP50, 1)} / ${
        f(s.ringP99, 1, " ms")
      } | ${f(s.tick.p99LeMs, 0, " ms")}, ${f(s.tick.maxLeMs, 0, " ms")} | ${s.tick.overBudget} of ${s.tick.ticks} | ${
        budgetMet(s.tick) ? "yes" : "**no**"
      } | ${f(s.tickRate, 1, " Hz")} | ${pct(s.cores.cellapp)} | ${bases.join(" + ")} | ${
        f(serverMsPerClientSec(s.cores, s.connected), 3)
      } | ${pct(s.botCore)} (${f(s.connected ? s.botCore * 1000 / s.connected : null, 3)}) | ${
        f(s.movesPerClientSec, 1)
      } | ${f(s.p50, 0)} / ${f(s.p99, 0, " ms")} | ${s.errors} | ${pct(s.otherCores)} | ${pct(s.machineBusy)} |`;
    }),
  ].join("\n");
}

/** Runs the benchmark and writes its section of bench/RESULTS.md. */
export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      clients: { type: "string", default: "1250" },
      seconds: { type: "string", default: "20" },
      observers: { type: "string", default: "25" },
      baseapps: { type: "string", default: "2" },
    },
  });
  const steps = values.clients.split(",").map((s) => numberFlag("clients", s, 1, 5000));
  if (steps.length > 4) throw new Error("--clients: at most four steps, e.g. 500,1250,2000");
  const seconds = numberFlag("seconds", values.seconds, 5, 300);
  const observers = numberFlag("observers", values.observers, 0, 200);
  const baseapps = numberFlag("baseapps", values.baseapps, 1, 4);
  const log = (l: string) => console.error(`capacity bench: ${l}`);
  // Bounded: per step, logins (PBKDF2 on the baseapps: ~25 per second here, plus slack), warm-up, window, stops.
  const limitMs = steps.reduce((n, c) => n + (120 + c / 10 + WARMUP + seconds + 60) * 1000, 0);
  const stopWatch = giveUpAfter("capacity", limitMs, () => running);
  try {
    const rows: Step[] = [];
    for (const clients of steps) {
      log(`${clients} clients in S = ${sideFor(clients)} m, one cellapp, ${baseapps} baseapps`);
      rows.push(await runStep(clients, seconds, observers, baseapps, log));
    }
    const crossed = rows.find((r) => !budgetMet(r.tick));
    const growth = costGrowth(rows.map((r) => ({
      clients: r.clients,
      msPerClientSec: serverMsPerClientSec(r.cores, r.connected),
    })));
    const starved = rows.filter((r) => r.machineBusy > 0.9 || r.movesPerClientSec < 9.5).map((r) => f(r.clients));
    const md = [
      `One cellapp, ${baseapps} baseapp${
        baseapps > 1 ? "s" : ""
      }, one space of one cell of side S = 2,000 m × √(clients / 500)`,
      `(the density of the Colyseus peer scene at S = 2,000 m), AoI ${AOI} m, ${TICK_HZ} Hz (budget ${BUDGET_MS} ms);`,
      `clients walking at 5 m/s as the peer's do, 10 moves/s in 10 send groups, a counter raised every 5 s;`,
      `${seconds} s measured after a ${WARMUP} s warm-up. ${observers} bots decode and measure latency (first sighting`,
      "of a move by any of them), the others count bytes; all bots run in this one process. Tick times are the cell's",
      "own: the histogram of every tick in the window (/metrics; bucket bounds 50, 100, 250 ms…) says how many went",
      "over the budget (met: at most 1 %), the ring of its last 128 ticks (admin API) gives finer p50 / p99. The",
      "tick leaves out the messages the cellapp handles between ticks: its CPU is the fuller figure. CPU is /proc",
      "utime + stime over the window (one core = 100 %); the machine's 2 cores are shared by every process here",
      "(and by other work: last column), so a saturated machine shows as late ticks and latency, not only the cellapp.",
      "",
      table(rows),
      "",
      crossed
        ? `The tick p99 first crossed the budget at ${f(crossed.clients)} clients.`
        : `The tick p99 stayed within the budget at every step (up to ${f(Math.max(...steps))} clients).`,
      ...(growth === null ? [] : [
        "",
        `The servers' CPU per client-second (cellapp and baseapps) grew by at most ${f(growth * 100, 1, " %")} from ${
          f(rows[0].clients)
        } clients to any later step (aim: at most 10 %): ${growth <= 0.1 ? "met" : "**not met**"}.`,
      ]),
      ...(starved.length
        ? [
          "",
          `At ${starved.join(", ")} clients the machine was saturated (over 90 % of its cores busy) or the bots fell`,
          "behind (under 9.5 moves per client-s): tick times are wall-clock and count the time the cellapp waited for",
          "a core, so these rows measure the machine more than the cellapp. Run on a quiet machine, or with the",
          "bots on another one, for the cellapp's own limit.",
        ]
        : []),
    ].join("\n");
    console.log(md);
    await writeResults("capacity", md);
  } finally {
    stopWatch();
  }
}
