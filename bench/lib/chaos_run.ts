/**
 * The chaos scene (docs/faults.md, "Chaos"): a cluster of cellapps and baseapps, a space of
 * several cells with NPCs, bots raising counters, and a seeded schedule of
 * faults (cellapps killed or stopped, a baseapp killed, the cellappmgr
 * killed), each restarted as an operator or the local reviver would; per
 * fault it measures detection, restore times, entities lost or doubled, bots
 * resumed or gone, and counter progress lost.
 */
import { errorText } from "../../core/errors.ts";
import { seededRandom } from "../../core/random.ts";
import { registry } from "../../entities/mod.ts";
import { ChaosCluster, type ChaosProc } from "./chaos_cluster.ts";
import { type BotTally, CounterBots } from "./chaos_bots.ts";
import { EntityWatch, type Poll } from "./chaos_watch.ts";

/** The kinds of fault a schedule holds. */
export type FaultKind = "kill-cellapp" | "stop-cellapp" | "kill-baseapp" | "kill-cellappmgr";

/** The scene and its faults. */
export interface ChaosOptions {
  cellapps: number;
  baseapps: number;
  cells: number;
  npcs: number;
  bots: number;
  /** Seconds from the first fault's window to the end of the last one. */
  seconds: number;
  /** The faults, in any order (the seed shuffles them). */
  faults: FaultKind[];
  /** How long a stopped cellapp stays stopped, seconds. */
  stopSeconds: number;
  /** Seconds between a bot's counter raises. */
  raiseEvery: number;
  seed: number;
  /** Side of the square space, metres. */
  side: number;
  /** How long after a kill the process is started again, ms (the reviver's first back-off). */
  restartAfterMs: number;
  /** Admin API polling period, ms. */
  pollMs: number;
  /**
   * Seconds between the scene being up and the first fault: an entity has no backup before its first backup period
   * ends (its base logs "died before its first backup"), so faults start after two periods.
   */
  warmup: number;
  /** The baseapps' PostgreSQL URL; null: one Deno KV file. */
  db?: string | null;
  log?: (line: string) => void;
}

/** The issue's scene. */
export const CHAOS_DEFAULTS: ChaosOptions = {
  cellapps: 3,
  baseapps: 2,
  cells: 4,
  npcs: 1000,
  bots: 200,
  seconds: 180,
  faults: [
    "kill-cellapp",
    "kill-cellapp",
    "kill-cellapp",
    "kill-cellapp",
    "kill-baseapp",
    "kill-cellappmgr",
    "stop-cellapp",
  ],
  stopSeconds: 10,
  raiseEvery: 1,
  seed: 12,
  side: 400,
  restartAfterMs: 500,
  pollMs: 250,
  warmup: 2,
};

/** What one fault did. */
export interface FaultReport {
  kind: FaultKind;
  /** Seconds into the run. */
  at: number;
  /** Which process (role, slot, pid). */
  target: string;
  /** ms from the fault to the cellappmgr no longer listing the process (for the cellappmgr: its admin API back). */
  detectionMs: number | null;
  /** ms from detection to each affected entity (cellapps) or bot (baseapp) back: p50, p99, max; players alone: max. */
  restoreP50Ms: number | null;
  restoreP99Ms: number | null;
  restoreMaxMs: number | null;
  playersRestoreMaxMs: number | null;
  /** Entities real on the process at the fault. */
  affected: number;
  /** Of those, never real again by the end. */
  lost: number;
  bots: BotTally;
}

/** The whole run. */
export interface ChaosReport {
  options: Omit<ChaosOptions, "log">;
  faults: FaultReport[];
  /** Ids real at the start (NPCs and players) not real at the end. */
  lost: number[];
  /** Ids seen real on two cellapps in two polls in a row. */
  doubled: number[];
  botsStarted: number;
  botsConnectedAtEnd: number;
  loginErrors: string[];
  raiseErrors: number;
  /** Seconds the whole run took. */
  seconds: number;
  /** The processes' warnings and errors (their last few hundred lines each). */
  logs: string[];
}

/** A fault of the schedule: what, and when (seconds after the scene is up). */
export interface ScheduledFault {
  kind: FaultKind;
  at: number;
}

/** The faults shuffled by the seed and spread over `seconds`, one per equal slot at a seeded point of its first half. */
export function schedule(faults: FaultKind[], seconds: number, random: () => number): ScheduledFault[] {
  const order = [...faults];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  const slot = seconds / order.length;
  return order.map((kind, i) => ({ kind, at: i * slot + random() * slot * 0.3 }));
}

function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs the scene with its faults and reports; every process it started is ended before it resolves. */
export async function runChaos(opts: ChaosOptions): Promise<ChaosReport> {
  const log = opts.log ?? (() => {});
  // Two streams, so that the fault schedule does not depend on how many bots drew positions.
  const random = seededRandom(opts.seed);
  const botRandom = seededRandom(opts.seed ^ 0x5eed);
  const plan = schedule(opts.faults, opts.seconds, random);
  const began = performance.now();
  const dir = await Deno.makeTempDir({ prefix: "chaos-" });
  const cluster = await ChaosCluster.start({
    cellapps: opts.cellapps,
    baseapps: opts.baseapps,
    dir,
    db: opts.db ?? null,
    cellFlags: [`--aoi-radius=60`, `--ghost-radius=80`],
    baseFlags: ["--client-spawn", "--login-rate=1000", "--autosave=1"],
  });
  let watch: EntityWatch | null = null;
  let bots: CounterBots | null = null;
  try {
    const admin = cluster.admin;
    for (let i = 0;; i++) {
      const c = await fetch(`${admin}/api/cluster`).then((r) => r.json()).catch(() => null);
      const n = (c?.processes ?? []).filter((p: { role: string }) => p.role !== "cellappmgr").length;
      if (n >= opts.cellapps + opts.baseapps) break;
      if (i > 300) throw new Error(`only ${n} of ${opts.cellapps + opts.baseapps} members registered in 30 s`);
      await sleep(100);
    }
    const res = await fetch(`${admin}/api/spaces`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        bounds: [0, 0, opts.side, opts.side],
        cells: opts.cells,
        entities: [{ type: "NPC", count: opts.npcs, props: { wanderRadius: 20 } }],
      }),
    });
    const made = await res.json();
    if (res.status !== 201) throw new Error(`POST /api/spaces: ${res.status} ${JSON.stringify(made)}`);
    const spaceId = (made as { id: number }).id;
    watch = new EntityWatch(admin, spaceId, opts.pollMs);
    bots = new CounterBots({
      urls: cluster.clientUrls,
      registry,
      spaceId,
      bounds: [0, 0, opts.side, opts.side],
      raiseEvery: opts.raiseEvery,
      random: botRandom,
      prefix: `chaos-${Date.now().toString(36)}-`,
    });
    await bots.start(opts.bots);
    const want = opts.npcs + bots.clients.length;
    const settled = await watch.until((p) => p.reals.size >= want, 30_000);
    if (!settled) throw new Error(`only ${watch.last?.reals.size} of ${want} entities real after 30 s`);
    const baseline = new Set(settled.reals.keys());
    const players = new Set(bots.clients.map((c) => c.player.id));
    log(`scene up: ${baseline.size} entities real in space ${spaceId}; faults begin after ${opts.warmup} s`);
    await sleep(opts.warmup * 1000);

    const t0 = performance.now();
    const faults: Running[] = [];
    const pending: Promise<void>[] = [];
    for (const f of plan) {
      const wait = t0 + f.at * 1000 - performance.now();
      if (wait > 0) await sleep(wait);
      const report = await fault(f.kind, cluster, watch, bots, players, opts, random, log);
      report.at = Math.round((performance.now() - t0) / 100) / 10;
      faults.push(report);
      pending.push(report.done);
    }
    const end = t0 + opts.seconds * 1000 - performance.now();
    if (end > 0) await sleep(end);
    await Promise.all(pending);
    // Everything back: every entity of the start real again (or the wait ends and they count as lost).
    const lastDead = Math.max(...faults.map((f) => f.at));
    const back = await watch.until((p) => [...baseline].every((id) => p.reals.has(id)), 20_000);
    const final = back ?? watch.last!;
    const lost = [...baseline].filter((id) => !final.reals.has(id));
    for (const f of faults) f.lost = f.lostIds.filter((id) => !final.reals.has(id)).length;
    const connected = await waitConnected(bots, 20_000);
    await bots.stopRaising();
    log(`faults done (last at ${lastDead} s); ${lost.length} lost, ${watch.doubled.size} doubled`);
    const report: ChaosReport = {
      options: { ...opts, log: undefined } as Omit<ChaosOptions, "log">,
      faults: faults.map(({ done: _d, lostIds: _l, ...f }) => f),
      lost,
      doubled: [...watch.doubled],
      botsStarted: opts.bots,
      botsConnectedAtEnd: connected,
      loginErrors: bots.loginErrors,
      raiseErrors: bots.raiseErrors,
      seconds: Math.round((performance.now() - began) / 1000),
      logs: cluster.logs(),
    };
    return report;
  } finally {
    await bots?.stop().catch((e) => log(`bots stop: ${errorText(e)}`));
    await watch?.stop();
    await cluster.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

async function waitConnected(bots: CounterBots, ms: number): Promise<number> {
  const deadline = performance.now() + ms;
  while (bots.connected() < bots.clients.length && performance.now() < deadline) await sleep(100);
  return bots.connected();
}

type Running = FaultReport & { done: Promise<void>; lostIds: number[] };

/** Delivers one fault, restarts what it ended, and measures it; `done` settles when measured. */
async function fault(
  kind: FaultKind,
  cluster: ChaosCluster,
  watch: EntityWatch,
  bots: CounterBots,
  players: Set<number>,
  opts: ChaosOptions,
  random: () => number,
  log: (l: string) => void,
): Promise<Running> {
  const role = kind === "kill-baseapp" ? "baseapp" : kind === "kill-cellappmgr" ? "cellappmgr" : "cellapp";
  // A cellapp that holds none of the space's entities (one restarted after an earlier fault) would test nothing.
  const holding = new Set([...(watch.last?.reals.values() ?? [])].flat());
  const pidsHolding = new Set(
    (watch.last?.cluster?.processes ?? []).filter((p) => holding.has(p.id)).map((p) => p.pid),
  );
  const all = cluster.of(role);
  const loaded = all.filter((p) => pidsHolding.has(p.pid));
  const candidates = role === "cellapp" && loaded.length > 0 ? loaded : all;
  const target: ChaosProc = candidates[Math.floor(random() * candidates.length)];
  const cellappId = role === "cellapp"
    ? watch.last?.cluster?.processes.find((p) => p.pid === target.pid)?.id ?? null
    : null;
  const affected = cellappId === null
    ? []
    : [...(watch.last?.reals ?? new Map<number, number[]>())].filter(([, at]) => at.includes(cellappId)).map(([id]) =>
      id
    );
  const tally = bots.nextTally();
  const at = performance.now();
  const r: Running = {
    kind,
    at: 0,
    target: `${role} ${target.slot} (pid ${target.pid}${cellappId === null ? "" : `, id ${cellappId}`})`,
    detectionMs: null,
    restoreP50Ms: null,
    restoreP99Ms: null,
    restoreMaxMs: null,
    playersRestoreMaxMs: null,
    affected: affected.length,
    lost: 0,
    bots: tally,
    lostIds: [],
    done: Promise.resolve(),
  };
  const onTarget = role === "baseapp" ? bots.on(cluster.clientUrls[target.slot]) : 0;
  if (role === "baseapp") r.affected = onTarget;
  log(`${kind}: ${r.target}, ${role === "baseapp" ? `${onTarget} bots` : `${affected.length} entities`} on it`);
  if (kind === "stop-cellapp") await cluster.signal(target, "SIGSTOP");
  else await cluster.signal(target, "SIGKILL");

  const gone = (p: Poll) => p.cluster !== null && !p.cluster.processes.some((m) => m.pid === target.pid);
  const measure = async () => {
    if (kind === "kill-cellappmgr") {
      await sleep(opts.restartAfterMs);
      await cluster.startRole("cellappmgr", 0);
      const members = opts.cellapps + opts.baseapps;
      const up = await watch.until(
        (p) => p.cluster !== null && p.cluster.processes.filter((m) => m.role !== "cellappmgr").length >= members,
        30_000,
      );
      r.detectionMs = up ? Math.round(up.t - at) : null;
      return;
    }
    const restart = kind === "stop-cellapp"
      ? sleep(opts.stopSeconds * 1000).then(() => target.child.kill("SIGCONT"))
      : sleep(opts.restartAfterMs).then(() => cluster.startRole(role, target.slot)).then(() => {});
    const detected = await watch.until(gone, 30_000);
    const detectedAt = detected?.t ?? null;
    r.detectionMs = detectedAt === null ? null : Math.round(detectedAt - at);
    if (kind === "kill-baseapp") {
      await restart;
      const deadline = performance.now() + 30_000;
      while (tally.resumed + tally.closed < onTarget && performance.now() < deadline) {
        await sleep(100);
      }
      const times = tally.resumeMs.map((ms) => Math.max(0, ms - (r.detectionMs ?? 0))).sort((a, b) => a - b);
      r.restoreP50Ms = percentile(times, 50);
      r.restoreP99Ms = percentile(times, 99);
      r.restoreMaxMs = percentile(times, 100);
      r.playersRestoreMaxMs = r.restoreMaxMs;
      return;
    }
    // A cellapp: each entity it held is back when a poll sees it real on another cellapp.
    const back = new Map<number, number>();
    const stopPolls = watch.onPoll((p) => {
      for (const id of affected) {
        if (back.has(id)) continue;
        const where = p.reals.get(id);
        if (where && where.some((c) => c !== cellappId)) back.set(id, p.t);
      }
    });
    await watch.until(() => back.size === affected.length, 30_000);
    stopPolls();
    await restart;
    const from = detectedAt ?? at;
    const times = [...back.values()].map((t) => Math.max(0, t - from)).sort((a, b) => a - b);
    const ptimes = [...back].filter(([id]) => players.has(id)).map(([, t]) => Math.max(0, t - from));
    r.restoreP50Ms = percentile(times, 50);
    r.restoreP99Ms = percentile(times, 99);
    r.restoreMaxMs = percentile(times, 100);
    r.playersRestoreMaxMs = ptimes.length ? Math.round(Math.max(...ptimes)) : null;
    r.lostIds = affected.filter((id) => !back.has(id));
  };
  r.done = measure().catch((e) => log(`${kind} ${r.target}: measuring failed: ${errorText(e)}`));
  return r;
}
