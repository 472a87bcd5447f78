/**
 * `deno task bench ghost_cost [--cellapps=1,4] [--per-cellapp=275] [--seconds=10] [--aoi=100] [--cpu-prof=DIR]`:
 * what a cellapp with neighbours costs, on this machine and loopback (no test hosts needed). Per cellapp count N, a
 * local cluster of N cellapps without baseapps and one space of N cells, `--per-cellapp` NPCs per cell at the hosts
 * scene's density (275 per km²), AoI `--aoi` and a ghost radius 15 m more; then the cellapps' CPU (from /proc) over
 * the window, per real. With `--cpu-prof`, each cellapp writes a V8 CPU profile to DIR when it stops. Prints its
 * figures; writes nothing to bench/RESULTS.md (the hosts bench's are the ones judged).
 */
import { parseArgs } from "node:util";
import { json, type SpawnProcess, startBenchCluster } from "./lib/cluster.ts";
import type { ClusterView, SpaceView } from "../core/views.ts";
import { cpuSeconds } from "./lib/procs.ts";
import { CHILD_V8_FLAGS, parseReady, selfCommand, spawnSelf, splitLines } from "../cli/local_cluster.ts";
import { figure as f, numberFlag } from "./lib/run.ts";

/** The hosts scene's density: 4,400 entities on 16 km². */
const DENSITY_PER_M2 = 4400 / (4000 * 4000);

/** Starts cellapps as spawnSelf does, with Deno's CPU profiler writing into `dir` when they exit. */
function profiling(dir: string): SpawnProcess {
  return (role, flags, env, log) => {
    if (role !== "cellapp") return spawnSelf(role, flags, env, log);
    const self = selfCommand();
    const process = new Deno.Command(self.cmd, {
      args: [...self.args.slice(0, 2), "--cpu-prof", `--cpu-prof-dir=${dir}`, ...self.args.slice(2), ...flags],
      env: { DENO_V8_FLAGS: CHILD_V8_FLAGS.cellapp, ...env },
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const ready = (async () => {
      const reader = process.stdout.pipeThrough(new TextDecoderStream()).pipeThrough(splitLines()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the cellapp (pid ${process.pid}) exited before it was ready`);
        const r = parseReady(value);
        if (!r) continue;
        (async () => {
          while (!(await reader.read()).done);
        })();
        return r;
      }
    })();
    return { role, pid: process.pid, process, ready, status: process.status };
  };
}

/** One run's figures. */
interface Figures {
  cellapps: number;
  reals: number;
  ghostsPerReal: number;
  /** CPU of all cellapps, share of a core. */
  cpu: number;
  perCellapp: number[];
  peerBytesPerS: number;
}

async function measure(n: number, perCellapp: number, seconds: number, aoi: number, prof?: string): Promise<Figures> {
  const npcs = n * perCellapp;
  const side = Math.round(Math.sqrt(npcs / DENSITY_PER_M2));
  const cluster = await startBenchCluster(
    ["--kv=:memory:", "--npcs=0", "--baseapps=0", `--cellapps=${n}`, "--log-level=warn"],
    { cellapps: n, baseapp: false },
    prof ? profiling(prof) : spawnSelf,
  );
  try {
    const admin = cluster.admin;
    const { id } = await json<{ id: number }>(`${admin}/api/spaces`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        bounds: [0, 0, side, side],
        cells: n,
        entities: [{ type: "NPC", count: npcs }],
        aoiRadius: aoi,
        ghostRadius: aoi + 15,
      }),
    });
    const until = Date.now() + 60_000;
    for (;;) {
      const space = await json<SpaceView>(`${admin}/api/spaces/${id}`);
      if (space.cells.reduce((a, c) => a + c.reals, 0) >= npcs) break;
      if (Date.now() > until) throw new Error(`space ${id}: not all ${npcs} NPCs in after 60 s`);
      await new Promise((r) => setTimeout(r, 300));
    }
    await new Promise((r) => setTimeout(r, 3000));
    const cellapps = cluster.processes.filter((p) => p.role === "cellapp");
    const bytes = async () =>
      (await json<ClusterView>(`${admin}/api/cluster`)).processes.reduce((a, p) => a + (p.peerBytesOut ?? 0), 0);
    const b0 = await bytes();
    const t0 = performance.now();
    const c0 = cellapps.map((p) => cpuSeconds(p.pid) ?? NaN);
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const c1 = cellapps.map((p) => cpuSeconds(p.pid) ?? NaN);
    const secs = (performance.now() - t0) / 1000;
    const b1 = await bytes();
    const space = await json<SpaceView>(`${admin}/api/spaces/${id}`);
    const reals = space.cells.reduce((a, c) => a + c.reals, 0);
    const perCell = c1.map((c, i) => (c - c0[i]) / secs);
    return {
      cellapps: n,
      reals,
      ghostsPerReal: space.cells.reduce((a, c) => a + c.ghosts, 0) / reals,
      cpu: perCell.reduce((a, b) => a + b, 0),
      perCellapp: perCell,
      peerBytesPerS: (b1 - b0) / secs,
    };
  } finally {
    await cluster.stop();
  }
}

/** Entry point for `deno task bench ghost_cost`. */
export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      cellapps: { type: "string", default: "1,4" },
      "per-cellapp": { type: "string", default: "275" },
      seconds: { type: "string", default: "10" },
      aoi: { type: "string", default: "100" },
      "cpu-prof": { type: "string" },
    },
  });
  const counts = values.cellapps!.split(",").map((v) => numberFlag("cellapps", v, 1, 8));
  const per = numberFlag("per-cellapp", values["per-cellapp"]!, 1, 5000);
  const seconds = numberFlag("seconds", values.seconds!, 1, 120);
  const aoi = numberFlag("aoi", values.aoi!, 10, 500);
  const prof = values["cpu-prof"];
  if (prof) await Deno.mkdir(prof, { recursive: true });
  const rows = [
    "| cellapps | reals | ghosts/real | cellapp CPU % (sum) | per cellapp % | ms CPU per entity-s | bytes/s between processes |",
    "|---:|---:|---:|---:|---|---:|---:|",
  ];
  for (const n of counts) {
    const r = await measure(n, per, seconds, aoi, prof);
    rows.push(
      `| ${n} | ${r.reals} | ${f(r.ghostsPerReal, 2)} | ${f(100 * r.cpu, 2)} | ${
        r.perCellapp.map((c) => f(100 * c, 2)).join(" / ")
      } | ${f(1000 * r.cpu / r.reals, 4)} | ${f(r.peerBytesPerS)} |`,
    );
    console.error(rows.at(-1));
  }
  console.log(rows.join("\n"));
}
