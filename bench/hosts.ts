/**
 * `deno task bench hosts [--cellapps=1,4,16] [--npcs=4000] [--bots=400] [--seconds=20] [--aoi=100,default]
 * [--idle=48] [--kv] [--quick]`: how cost grows as one world is spread over more cellapps, each process on a test host of
 * its own (a network namespace, testing/hosts.ts), bots on a client host. Per cellapp count N (one cluster
 * each: a cellappmgr, N cellapps and 4 baseapps on one PostgreSQL server, or each on its own Deno KV with --kv), one 4 km × 4 km space of N cells with the NPCs wandering and the
 * bots walking, at each AoI in turn. Per cellapp: CPU, reals, ghosts per real, bytes per second to other cellapps,
 * offloads per second, tick p99; cluster-wide: the cellappmgr's CPU and bytes, the baseapps' CPU per client. Then
 * an idle cluster of `--idle` cellapps measures the control plane alone. Figures and the model that extrapolates
 * them go to bench/RESULTS.md.
 */
import { parseArgs } from "node:util";
import type { ClusterView, SpaceView } from "../core/views.ts";
import { parsePromText, samplesOf } from "../testing/prom_text.ts";
import { ip } from "../testing/hosts.ts";
import { HostsCluster } from "../testing/hosts_cluster.ts";
import { cpuSeconds } from "./lib/procs.ts";
import { figure as f, giveUpAfter, numberFlag } from "./lib/run.ts";
import { writeResults } from "./results.ts";

const SIDE = 4000, BASEAPPS = 4, SETTLE_S = 5;

/** One scene's inputs. */
interface Scene {
  cellapps: number;
  /** AoI radius (m), or null for the cluster's default. */
  aoi: number | null;
  npcs: number;
  bots: number;
  seconds: number;
}

/** One cellapp's figures over a window. */
interface CellappFigures {
  id: number;
  cpu: number;
  reals: number;
  ghosts: number;
  bytesToCellappsPerS: number;
  offloadsPerS: number;
  tickP99Ms: number;
}

/** One scene's figures. */
interface SceneResult extends Scene {
  cells: CellappFigures[];
  mgrCpu: number;
  mgrBytesPerS: number;
  baseCpu: number;
  botsConnected: number;
  botsErrors: number;
  botsGaps: number;
  botsOutOfOrder: number;
}

/** The control plane of an idle cluster. */
interface IdleResult {
  cellapps: number;
  seconds: number;
  mgrCpu: number;
  mgrBytesPerS: number;
  cellappCpuMean: number;
}

/** Processes running now: killed by pid if the run passes its time limit. */
let running: number[] = [];

/** Bytes in and out of a host's link so far (its veth's counters, read inside its namespace). */
async function linkBytes(c: HostsCluster, name: string): Promise<number> {
  const h = c.hosts.get(name);
  const [dev] = JSON.parse(await ip(["-n", h.ns, "-s", "-j", "link", "show", "dev", h.link])) as {
    stats64: { rx: { bytes: number }; tx: { bytes: number } };
  }[];
  return dev.stats64.rx.bytes + dev.stats64.tx.bytes;
}

/** Reads `stream` to its end, keeping its last `n` characters. */
async function tail(stream: ReadableStream<Uint8Array>, n: number): Promise<string> {
  let kept = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) kept = (kept + chunk).slice(-n);
  return kept;
}

/** What a window is measured between. */
interface Snapshot {
  t: number;
  cpu: Map<number, number>;
  view: ClusterView;
  /** Bytes each cellapp (by id) sent to other cellapps. */
  toCellapps: Map<number, number>;
  mgrBytes: number;
}

async function snapshot(c: HostsCluster): Promise<Snapshot> {
  const t = performance.now();
  const cpu = new Map(c.pids.map((p) => [p, cpuSeconds(p) ?? NaN]));
  const view = await c.api<ClusterView>("/api/cluster");
  const prom = parsePromText(await c.api<string>("/metrics"));
  const toCellapps = new Map<number, number>();
  for (const s of samplesOf(prom, "seamless_peer_bytes_total", { peer_role: "cellapp", direction: "out" })) {
    toCellapps.set(Number(s.labels.process), s.value);
  }
  return { t, cpu, view, toCellapps, mgrBytes: await linkBytes(c, "mgr") };
}

async function runScene(c: HostsCluster, s: Scene, log: (l: string) => void): Promise<SceneResult> {
  const { id: spaceId } = await c.api<{ id: number }>("/api/spaces", {
    method: "POST",
    body: JSON.stringify({
      bounds: [0, 0, SIDE, SIDE],
      cells: s.cellapps,
      entities: [{ type: "NPC", count: s.npcs }],
      ...(s.aoi === null ? {} : { aoiRadius: s.aoi, ghostRadius: s.aoi + 15 }),
    }),
  });
  const bots = c.bots([
    `--count=${s.bots}`,
    `--space=${spaceId}`,
    "--warmup=0",
    // Measured from the last login on: the bench's window (after the settling) ends a little before the bots do.
    `--duration=${s.seconds + SETTLE_S + 3}`,
    `--observers=${Math.min(40, s.bots)}`,
  ]);
  running.push(bots.pid);
  const botOut = new Response(bots.stdout).text();
  const botErr = tail(bots.stderr, 2000);
  try {
    const want = s.npcs + s.bots;
    const until = Date.now() + 90_000;
    for (;;) {
      const space = await c.api<SpaceView>(`/api/spaces/${spaceId}`);
      const reals = space.cells.reduce((n, cell) => n + cell.reals, 0);
      if (reals >= want) break;
      if (Date.now() > until) throw new Error(`space ${spaceId}: ${reals} of ${want} entities after 90 s`);
      await new Promise((r) => setTimeout(r, 500));
    }
    log(`  ${s.cellapps} cellapps, AoI ${s.aoi ?? "default"}: ${want} entities in; settling ${SETTLE_S} s`);
    await new Promise((r) => setTimeout(r, SETTLE_S * 1000));
    const a = await snapshot(c);
    await new Promise((r) => setTimeout(r, s.seconds * 1000));
    const b = await snapshot(c);
    const secs = (b.t - a.t) / 1000;
    const cpuOf = (pid: number) => ((b.cpu.get(pid) ?? NaN) - (a.cpu.get(pid) ?? NaN)) / secs;
    const cells: CellappFigures[] = [];
    for (const p of b.view.processes.filter((p) => p.role === "cellapp")) {
      const before = a.view.processes.find((q) => q.id === p.id);
      const mine = (v: typeof p | undefined) => (v?.cells ?? []).filter((cell) => cell.spaceId === spaceId);
      const offloads = (v: typeof p | undefined) => mine(v).reduce((n, cell) => n + cell.offloadsOut, 0);
      cells.push({
        id: p.id,
        cpu: cpuOf(p.pid),
        reals: mine(p).reduce((n, cell) => n + cell.reals, 0),
        ghosts: mine(p).reduce((n, cell) => n + cell.ghosts, 0),
        bytesToCellappsPerS: ((b.toCellapps.get(p.id) ?? 0) - (a.toCellapps.get(p.id) ?? 0)) / secs,
        offloadsPerS: (offloads(p) - offloads(before)) / secs,
        tickP99Ms: Math.max(0, ...mine(p).map((cell) => cell.tickMsP99)),
      });
    }
    const baseCpu = c.baseapps.reduce((n, p) => n + cpuOf(p.pid), 0);
    const status = await Promise.race([
      bots.status,
      new Promise<null>((r) => setTimeout(() => r(null), 60_000)),
    ]);
    const report = status?.success ? JSON.parse((await botOut).trim().split("\n").at(-1) ?? "{}") : null;
    if (!report) log(`  bots ended without a report (${status?.code ?? "still running"}): ${await botErr}`);
    return {
      ...s,
      cells,
      mgrCpu: cpuOf(c.mgr.pid),
      mgrBytesPerS: (b.mgrBytes - a.mgrBytes) / secs,
      baseCpu,
      botsConnected: report?.connected ?? NaN,
      botsErrors: report?.errors ?? NaN,
      botsGaps: report?.gaps ?? NaN,
      botsOutOfOrder: report?.outOfOrder ?? NaN,
    };
  } finally {
    try {
      bots.kill("SIGKILL");
    } catch {
      // already gone
    }
    await bots.status;
    running = running.filter((p) => p !== bots.pid);
    await c.api(`/api/spaces/${spaceId}`, { method: "DELETE" }).catch(() => {});
  }
}

async function runIdle(n: number, seconds: number): Promise<IdleResult> {
  await using c = await HostsCluster.start({ cellapps: n, baseapps: 1, postgres: true });
  running = c.pids;
  await new Promise((r) => setTimeout(r, SETTLE_S * 1000));
  const a = await snapshot(c);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const b = await snapshot(c);
  const secs = (b.t - a.t) / 1000;
  const cpuOf = (pid: number) => ((b.cpu.get(pid) ?? NaN) - (a.cpu.get(pid) ?? NaN)) / secs;
  return {
    cellapps: n,
    seconds: secs,
    mgrCpu: cpuOf(c.mgr.pid),
    mgrBytesPerS: (b.mgrBytes - a.mgrBytes) / secs,
    cellappCpuMean: c.cellapps.reduce((s, p) => s + cpuOf(p.pid), 0) / n,
  };
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** Cellapp CPU per real entity (ms of CPU per entity-second) and ghosts per real, over all cellapps of a scene. */
function perEntity(r: SceneResult): { cpuMs: number; ghostsPerReal: number; bytesPerReal: number } {
  const reals = sum(r.cells.map((c) => c.reals));
  return {
    cpuMs: 1000 * sum(r.cells.map((c) => c.cpu)) / reals,
    ghostsPerReal: sum(r.cells.map((c) => c.ghosts)) / reals,
    bytesPerReal: sum(r.cells.map((c) => c.bytesToCellappsPerS)) / reals,
  };
}

/**
 * Extrapolates to BigWorld's published scale. A cellapp's CPU is a fixed cost (an idle cellapp's, from the idle run),
 * plus a cost per real (from one cellapp, which has no ghosts), plus a cost per ghost it holds (what the most
 * cellapps measured leave over); ghosts per real come from the band a ghost radius wide around square cells at this
 * scene's density, and the cellappmgr's CPU is linear in cellapps (from the idle run).
 */
function model(results: SceneResult[], idle: IdleResult[], aoi: number | null): string[] {
  const rs = results.filter((r) => r.aoi === aoi).sort((x, y) => x.cellapps - y.cellapps);
  if (rs.length < 2 || rs[0].cellapps !== 1) return ["(the model needs a run on 1 cellapp and one on more)"];
  const fixed = idle.at(-1)?.cellappCpuMean ?? 0;
  const one = rs[0].cells[0], most = rs.at(-1)!;
  const a = Math.max(0, one.cpu - fixed) / one.reals;
  const n = most.cells.length;
  const cpuN = sum(most.cells.map((c) => c.cpu)) / n;
  const realsN = sum(most.cells.map((c) => c.reals)) / n, ghostsN = sum(most.cells.map((c) => c.ghosts)) / n;
  const b = ghostsN > 0 ? Math.max(0, cpuN - fixed - a * realsN) / ghostsN : 0;
  const density = (rs[0].npcs + rs[0].bots) / (SIDE * SIDE);
  const clients = 100_000, cellapps = 80;
  const cellSide = Math.sqrt(clients / density / cellapps);
  const ghostR = (aoi ?? 500) + 15;
  const g = ((cellSide + 2 * ghostR) ** 2 - cellSide ** 2) / cellSide ** 2;
  const perCellapp = clients / cellapps;
  const cores = fixed + perCellapp * (a + b * g);
  const ms = (cores: number) => f(1000 * cores, 4);
  const lines = [
    `- Cellapp CPU = fixed + a × reals + b × ghosts: fixed = ${f(100 * fixed, 2)} % of a core (an idle cellapp), a = ${
      ms(a)
    } ms/s per real (1 cellapp), b = ${ms(b)} ms/s per ghost (${n} cellapps: ${f(realsN)} reals and ${
      f(ghostsN)
    } ghosts each). The fixed cost alone is ${f(100 * fixed * n / (one.cpu || 1), 0)} % of the 1-cellapp scene's cost.`,
    `- At BigWorld's scale (${f(clients)} entities, ${cellapps} cellapps, this scene's density of ${
      f(density * 1e6, 0)
    } per km²): square cells ${f(cellSide)} m wide, ghosts per real ${f(g, 2)} (band of ${ghostR} m), ${
      f(perCellapp)
    } reals per cellapp needing ${f(cores, 3)} cores each; cost per entity ${
      f((cellapps * cores) / (fixed + clients * a), 2)
    }× that of one cellapp holding them all (which no one machine could).`,
  ];
  if (idle.length >= 1) {
    const i = idle.at(-1)!;
    const perCellappMgr = i.mgrCpu / i.cellapps;
    lines.push(
      `- The cellappmgr, idle, costs ${f(100 * perCellappMgr, 3)} % of a core per cellapp (${i.cellapps} idle: ${
        f(100 * i.mgrCpu, 2)
      } %), so about ${f(100 * perCellappMgr * cellapps, 1)} % at ${cellapps} before balancing and players.`,
    );
  }
  lines.push(
    "- Assumed: entities spread evenly at the scene's density, cells square and equally loaded, witnesses' cost" +
      " per real the same as here (the same share of players), each cellapp on a machine of its own (here all" +
      " share two cores, which inflates each one's fixed cost and tick times).",
  );
  return lines;
}

function table(results: SceneResult[]): string[] {
  const out = [
    "| cellapps | AoI | cellapp | CPU % | reals | ghosts/real | bytes/s to cellapps | offloads/s | tick p99 ms |",
    "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const r of results) {
    for (const c of r.cells) {
      out.push(
        `| ${r.cellapps} | ${r.aoi ?? "default"} | ${c.id} | ${f(100 * c.cpu, 1)} | ${c.reals} | ${
          f(c.reals ? c.ghosts / c.reals : 0, 2)
        } | ${f(c.bytesToCellappsPerS)} | ${f(c.offloadsPerS, 2)} | ${f(c.tickP99Ms, 1)} |`,
      );
    }
  }
  return out;
}

function summary(results: SceneResult[]): string[] {
  const out = [
    "| cellapps | AoI | cellapp CPU ms per entity-s | growth from 1 | ghosts/real | bytes/s per real to cellapps | cellappmgr CPU % | cellappmgr bytes/s | baseapp CPU ms per client-s | bots connected / errors / gaps / reordered |",
    "|---:|---|---:|---:|---:|---:|---:|---:|---:|---|",
  ];
  for (const r of results) {
    const e = perEntity(r);
    const base = results.find((x) => x.aoi === r.aoi && x.cellapps === 1);
    const growth = base ? e.cpuMs / perEntity(base).cpuMs : NaN;
    out.push(
      `| ${r.cellapps} | ${r.aoi ?? "default"} | ${f(e.cpuMs, 3)} | ${f(growth, 2)}× | ${f(e.ghostsPerReal, 2)} | ${
        f(e.bytesPerReal, 1)
      } | ${f(100 * r.mgrCpu, 2)} | ${f(r.mgrBytesPerS)} | ${
        f(1000 * r.baseCpu / r.bots, 3)
      } | ${r.botsConnected} / ${r.botsErrors} / ${r.botsGaps} / ${r.botsOutOfOrder} |`,
    );
  }
  return out;
}

/** Entry point for `deno task bench hosts`. */
export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      cellapps: { type: "string", default: "1,4,16" },
      npcs: { type: "string", default: "4000" },
      bots: { type: "string", default: "400" },
      seconds: { type: "string", default: "20" },
      aoi: { type: "string", default: "100,default" },
      idle: { type: "string", default: "48" },
      quick: { type: "boolean", default: false },
      kv: { type: "boolean", default: false },
      "no-write": { type: "boolean", default: false },
    },
  });
  const why = await HostsCluster.unavailable();
  if (why) {
    console.error(`hosts bench: needs test hosts (${why})`);
    Deno.exit(2);
  }
  const quick = values.quick;
  const counts = (quick ? "1,4" : values.cellapps!).split(",").map((v) => numberFlag("cellapps", v, 1, 64));
  const aois = (quick ? "100" : values.aoi!).split(",").map((v) =>
    v === "default" ? null : numberFlag("aoi", v, 10, 2000)
  );
  const npcs = quick ? 500 : numberFlag("npcs", values.npcs!, 0, 20_000);
  const bots = quick ? 40 : numberFlag("bots", values.bots!, 1, 2000);
  const seconds = quick ? 5 : numberFlag("seconds", values.seconds!, 1, 600);
  const idleN = quick ? 8 : numberFlag("idle", values.idle!, 0, 64);
  const log = (l: string) => console.error(l);
  const stopWatch = giveUpAfter("hosts", 40 * 60_000, () => running);
  const results: SceneResult[] = [];
  for (const n of counts) {
    log(`hosts bench: ${n} cellapps and ${BASEAPPS} baseapps on their own hosts`);
    await using c = await HostsCluster.start({ cellapps: n, baseapps: BASEAPPS, postgres: !values.kv });
    running = c.pids;
    for (const aoi of aois) {
      const r = await runScene(c, { cellapps: n, aoi, npcs, bots, seconds }, log);
      log(summary([r]).at(-1)!);
      results.push(r);
    }
  }
  const idle: IdleResult[] = [];
  if (idleN > 0) {
    log(`hosts bench: an idle cluster of ${idleN} cellapps`);
    idle.push(await runIdle(idleN, seconds * 2));
  }
  stopWatch();
  const md = [
    `${npcs} NPCs and ${bots} bots in one ${SIDE / 1000} km × ${
      SIDE / 1000
    } km space of one cell per cellapp, ${BASEAPPS} baseapps ${
      values.kv ? "each on its own Deno KV" : "on one PostgreSQL server"
    }, each process on a test host of its own (a network namespace on one bridge), ${seconds} s windows after everyone is in; partitions held still. ${
      quick ? "**Quick run** (fewer entities and cellapps): not the figures the aims are judged on." : ""
    }`,
    "",
    ...summary(results),
    "",
    "Per cellapp:",
    "",
    ...table(results),
    "",
    ...idle.map((i) =>
      `Idle: ${i.cellapps} cellapps, no entities, ${f(i.seconds, 0)} s: the cellappmgr used ${
        f(100 * i.mgrCpu, 2)
      } % of a core and ${f(i.mgrBytesPerS)} bytes/s; a cellapp ${f(100 * i.cellappCpuMean, 2)} % on average.`
    ),
    "",
    ...aois.flatMap((aoi) => [`Model, AoI ${aoi ?? "default"}:`, "", ...model(results, idle, aoi), ""]),
  ].join("\n");
  console.log(md);
  if (!values["no-write"]) await writeResults("hosts", md);
}
