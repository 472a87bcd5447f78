/**
 * The chaos scene on test hosts (`deno task bench chaos --hosts`): a HostsCluster (each process on a network
 * namespace of its own, the baseapps on PostgreSQL), a space of several cells with NPCs, SDK bots raising their
 * counters from the client host, and one fault after another (chaos_hosts_faults.ts), each lasting a while, then
 * healed, then a settle period. Every cellapp and baseapp writes its claims (--history); after the run the history
 * checker (tools/history/) looks for entities real twice or accounts with two bases (overlaps) and for what a fault
 * lost. Per fault: detection, how long the world was not whole, when it was whole again, overlaps, lost, doubled,
 * and the bots' counters.
 */
import { errorText } from "../../core/errors.ts";
import { seededRandom } from "../../core/random.ts";
import type { ClusterView, ProcessView } from "../../core/views.ts";
import type { Client } from "../../client/client.ts";
import { registry } from "../../entities/mod.ts";
import { ADMIN_TOKEN, HostsCluster } from "../../testing/hosts_cluster.ts";
import type { Proc } from "../../testing/procs.ts";
import { checkHistory, formatReport, type HistoryReport, readHistory } from "../../tools/history/mod.ts";
import { type BotTally, CounterBots } from "./chaos_bots.ts";
import { EntityWatch, type Poll } from "./chaos_watch.ts";
import { deliver, type HostFaultKind } from "./chaos_hosts_faults.ts";

/** The scene and its faults. */
export interface HostsChaosOptions {
  cellapps: number;
  baseapps: number;
  cells: number;
  npcs: number;
  bots: number;
  /** The faults, in order. */
  faults: HostFaultKind[];
  /** How long each fault lasts before it is healed, seconds. */
  faultSeconds: number;
  /** After the world is whole again, how long before the next fault, seconds. */
  settleSeconds: number;
  /** The most to wait after a heal for the world to be whole, seconds. */
  wholeWithinSeconds: number;
  /** Seconds between the scene being whole and the first fault (backups of every entity first). */
  warmup: number;
  seed: number;
  /** Side of the square space, metres. */
  side: number;
  pollMs: number;
  raiseEvery: number;
  log?: (line: string) => void;
}

/** The bench's default scene: small enough for a 2-core machine shared with others, a few minutes in all. */
export const HOSTS_CHAOS_DEFAULTS: HostsChaosOptions = {
  cellapps: 3,
  baseapps: 2,
  cells: 4,
  npcs: 300,
  bots: 40,
  // The faults that need two cellapps holding reals first (a cellapp cut off comes back empty); the baseapp cut off
  // from the cellappmgr last: its players did not come back in the recorded run (bench/RESULTS.md).
  faults: [
    "cellapps-apart",
    "cellapp-one-way",
    "cut-cellapp",
    "cellapp-from-mgr",
    "stop-cellappmgr",
    "kill-cellapp",
    "kill-baseapp",
    "kill-cellappmgr",
    "baseapp-from-mgr",
  ],
  faultSeconds: 10,
  settleSeconds: 3,
  wholeWithinSeconds: 20,
  warmup: 3,
  seed: 12,
  side: 400,
  pollMs: 250,
  raiseEvery: 1,
};

/** A bot plays while its counter changed within this long (a raise a second, one missed, and slack). */
export const PLAYING_WITHIN_MS = 2500;

/** What one fault did. */
export interface HostFaultReport {
  kind: HostFaultKind;
  /** Seconds from the first fault. */
  at: number;
  target: string;
  /**
   * ms from the fault to the first poll in which the cellappmgr no longer listed a member it listed before (or
   * listed it with a new generation) and that was killed or fenced (its log says so): it was declared dead; null:
   * it declared none dead. For a killed cellappmgr: null (a new one).
   */
  detectionMs: number | null;
  /** The members it declared dead (first first). */
  detected: string | null;
  /** Members it stopped listing that came back without being fenced (held, not declared dead). */
  held: string | null;
  /** ms, in the fault's window (fault to the next one), in which the world was not whole (polled). */
  notWholeMs: number;
  /** ms from the fault to the last time the world turned whole in its window; 0: never broken; null: not whole at the end. */
  wholeAgainMs: number | null;
  /** ms from the heal to the first whole poll after it; null: not whole within wholeWithinSeconds. */
  afterHealMs: number | null;
  /** Overlaps the history checker found starting in the window; the longest, ms. */
  overlaps: number;
  overlapMaxMs: number;
  /** What existed (claims) at the fault and not at the end of its window, per the history checker. */
  lost: number;
  /** Entities real at the fault (of the start) the admin API did not show real at the end of its window. */
  lostSeen: number;
  /** Ids the admin API showed real on two cellapps in two polls in a row during the window. */
  doubled: number;
  bots: BotTally;
}

/** The whole run. */
export interface HostsChaosReport {
  options: Omit<HostsChaosOptions, "log">;
  faults: HostFaultReport[];
  /** The history checker over the whole run (loss: from the first fault to the end). */
  history: HistoryReport;
  historyText: string;
  lostSeen: number[];
  doubled: number[];
  botsStarted: number;
  botsConnectedAtEnd: number;
  raiseErrors: number;
  /** Why bots' connections ended for good: "count x code reason". */
  botsGoneWhy: string[];
  seconds: number;
  /** The processes' last log lines. */
  logs: string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const wall = () => performance.timeOrigin + performance.now();

/** Whether a poll shows the world whole, and why not. */
interface Judge {
  whole: (p: Poll) => boolean;
  why: (p: Poll) => string;
}

interface Window {
  report: HostFaultReport;
  fromWall: number;
  toWall: number;
  /** The process it killed: pid, wall-clock ms. */
  killed?: { pid: number; at: number };
  /** performance.now() at the fault. */
  start: number;
  /** Members the cellappmgr stopped listing (or listed under a new generation), and the poll that saw it first. */
  away: [ProcessView, number][];
}

/**
 * Declared dead: a member missing from a poll that the fault killed or that logged it was fenced between the fault
 * and the next one (`until`, wall-clock ms); the others missing were held and came back unfenced.
 */
function classify(w: Window, procs: readonly Proc[], until: number): void {
  // An ISO time sorts as text; "9" sorts after every one of them.
  const from = new Date(w.fromWall).toISOString();
  const to = Number.isFinite(until) ? new Date(until).toISOString() : "9";
  const fenced = (pid: number) =>
    pid === w.killed?.pid ||
    procs.some((p) =>
      p.pid === pid &&
      p.stderr.some((l) => l.includes(": fenced: ") && l.slice(0, from.length) >= from && l.slice(0, to.length) < to)
    );
  const dead = w.away.filter(([m]) => fenced(m.pid)).sort((a, b) => a[1] - b[1]);
  const held = w.away.filter(([m]) => !fenced(m.pid));
  if (dead.length > 0) {
    w.report.detectionMs = Math.round(dead[0][1] - w.start);
    w.report.detected = dead.map(([m]) => `${m.role} ${m.id}`).join(", ");
  }
  if (held.length > 0) w.report.held = held.map(([m]) => `${m.role} ${m.id}`).join(", ");
}

/** Runs the scene with its faults on test hosts; everything it started and made is removed before it resolves. */
export async function runHostsChaos(opts: HostsChaosOptions): Promise<HostsChaosReport> {
  const log = opts.log ?? (() => {});
  const random = seededRandom(opts.seed);
  const botRandom = seededRandom(opts.seed ^ 0x5eed);
  const began = performance.now();
  const dir = await Deno.makeTempDir({ prefix: "chaos-hosts-" });
  const history = `--history=${dir}`;
  let watch: EntityWatch | null = null;
  let bots: CounterBots | null = null;
  try {
    await using cluster = await HostsCluster.start({
      cellapps: opts.cellapps,
      baseapps: opts.baseapps,
      postgres: true,
      cellFlags: [history, "--aoi-radius=60", "--ghost-radius=80"],
      baseFlags: [history, "--autosave=1"],
    });
    try {
      const { id: spaceId } = await cluster.api<{ id: number }>("/api/spaces", {
        method: "POST",
        body: JSON.stringify({
          bounds: [0, 0, opts.side, opts.side],
          cells: opts.cells,
          entities: [{ type: "NPC", count: opts.npcs, props: { wanderRadius: 20 } }],
        }),
      });
      watch = new EntityWatch(cluster.admin, spaceId, opts.pollMs, { authorization: `Bearer ${ADMIN_TOKEN}` });
      bots = new CounterBots({
        urls: await cluster.clientUrls(),
        registry,
        spaceId,
        bounds: [0, 0, opts.side, opts.side],
        raiseEvery: opts.raiseEvery,
        random: botRandom,
        prefix: `chaosh-${Date.now().toString(36)}-`,
      });
      await bots.start(opts.bots);
      if (bots.loginErrors.length) log(`${bots.loginErrors.length} logins failed: ${bots.loginErrors[0]}`);
      // When each bot last saw its counter change: it plays while that is recent.
      const changed = new Map(bots.clients.map((c) => [c, performance.now()]));
      // Why bots' connections ended for good (the SDK's reason), and how many each.
      const gone = new Map<string, number>();
      for (const c of bots.clients) {
        c.on("playerProperty", (name) => {
          if (name === "counter") changed.set(c, performance.now());
        });
        c.on("close", (code, reason) => {
          if (code === 1000) return;
          const why = `${code} ${reason}`.replace(/\d{4,}/g, "N");
          gone.set(why, (gone.get(why) ?? 0) + 1);
        });
      }
      const want = opts.npcs + bots.clients.length;
      const settled = await watch.until((p) => p.reals.size >= want, 60_000);
      if (!settled) throw new Error(`only ${watch.last?.reals.size} of ${want} entities real after 60 s`);
      const baseline = [...settled.reals.keys()];
      // Whole: judged per fault against what was there when it began (an earlier fault's damage is its own).
      const judge = (ids: number[], clients: Client[]): Judge => ({
        whole: (p) =>
          p.cluster !== null && ids.every((id) => p.reals.get(id)?.length === 1) &&
          clients.every((c) => !c.closed && p.t - changed.get(c)! < PLAYING_WITHIN_MS),
        why: (p) => {
          if (p.cluster === null) return "the cellappmgr did not answer";
          const missing = ids.filter((id) => !p.reals.has(id)).length;
          const twice = ids.filter((id) => (p.reals.get(id)?.length ?? 0) > 1).length;
          const closed = clients.filter((c) => c.closed).length;
          const idle = clients.filter((c) => !c.closed && p.t - changed.get(c)! >= PLAYING_WITHIN_MS).length;
          return `${missing} entities not real, ${twice} real twice, ${closed} bots closed, ${idle} bots not playing`;
        },
      });
      log(`scene up: ${baseline.length} entities real in space ${spaceId}; faults begin after ${opts.warmup} s`);
      await sleep(opts.warmup * 1000);
      await watch.until(judge(baseline, bots.clients).whole, opts.wholeWithinSeconds * 1000);

      const t0 = performance.now();
      const kills: Record<number, number> = {};
      const windows: Window[] = [];
      for (const kind of opts.faults) {
        const ids = baseline.filter((id) => watch!.last?.reals.has(id));
        const w = await oneFault(
          kind,
          cluster,
          watch,
          bots,
          judge(ids, bots.clients.filter((c) => !c.closed)),
          ids,
          opts,
          random,
          log,
        );
        w.report.at = Math.round((w.fromWall - (performance.timeOrigin + t0)) / 100) / 10;
        if (w.killed) kills[w.killed.pid] = w.killed.at;
        windows.push(w);
      }
      const firstWall = windows[0]?.fromWall ?? wall();
      const endWall = wall();
      const last = watch.last!;
      const lostSeen = baseline.filter((id) => !last.reals.has(id));
      await bots.stopRaising();
      const connected = bots.connected();

      // Every running process's claims past the end, then the checker over the whole run and per window.
      const running = [...cluster.cellapps, ...cluster.baseapps].map((p) => p.pid);
      const deadline = performance.now() + 10_000;
      let logs = await readHistory(dir);
      while (
        !running.every((pid) => logs.some((l) => l.pid === pid && l.records[l.records.length - 1].t > endWall)) &&
        performance.now() < deadline
      ) {
        await sleep(200);
        logs = await readHistory(dir);
      }
      const all = checkHistory(logs, { kills, loss: { before: firstWall, after: endWall } });
      for (const w of windows) {
        const inWindow = all.overlaps.filter((o) => o.at >= w.fromWall && o.at < w.toWall);
        w.report.overlaps = inWindow.length;
        w.report.overlapMaxMs = Math.round(Math.max(0, ...inWindow.map((o) => o.ms)));
        w.report.lost = checkHistory(logs, { kills, loss: { before: w.fromWall, after: w.toWall } }).lost.length;
      }
      windows.forEach((w, i) => classify(w, cluster.procs.all, windows[i + 1]?.fromWall ?? Infinity));
      for (const w of windows) {
        const r = w.report;
        log(`${r.kind}: declared dead ${r.detected ?? "none"} (${r.detectionMs ?? "-"} ms); held ${r.held ?? "none"}`);
      }
      const historyText = formatReport(all);
      log(`history: ${historyText.split("\n")[0]}`);
      return {
        options: { ...opts, log: undefined } as Omit<HostsChaosOptions, "log">,
        faults: windows.map((w) => w.report),
        history: all,
        historyText,
        lostSeen,
        doubled: [...watch.doubled],
        botsStarted: opts.bots,
        botsConnectedAtEnd: connected,
        raiseErrors: bots.raiseErrors,
        botsGoneWhy: [...gone].map(([why, n]) => `${n} x ${why}`),
        seconds: Math.round((performance.now() - began) / 1000),
        logs: cluster.procs.all.flatMap((p) => p.stderr.slice(-30).map((l) => `${p.ready.role} ${p.pid}: ${l}`)),
      };
    } finally {
      await bots?.stop().catch((e) => log(`bots stop: ${errorText(e)}`));
      await watch?.stop();
    }
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** Delivers one fault, heals it after `faultSeconds`, waits for the world to be whole and settles; measures it. */
async function oneFault(
  kind: HostFaultKind,
  cluster: HostsCluster,
  watch: EntityWatch,
  bots: CounterBots,
  { whole, why }: Judge,
  baseline: number[],
  opts: HostsChaosOptions,
  random: () => number,
  log: (l: string) => void,
): Promise<Window> {
  const view: ClusterView | null = watch.last?.cluster ?? null;
  const realsOn = new Map<number, number>();
  for (const at of watch.last?.reals.values() ?? []) for (const c of at) realsOn.set(c, (realsOn.get(c) ?? 0) + 1);
  const members = (view?.processes ?? []).filter((p) => p.role !== "cellappmgr");
  const doubledBefore = new Set(watch.doubled);
  const tally = bots.nextTally();
  const start = performance.now();
  const fromWall = wall();
  const report: HostFaultReport = {
    kind,
    at: 0,
    target: "",
    detectionMs: null,
    detected: null,
    held: null,
    notWholeMs: 0,
    wholeAgainMs: null,
    afterHealMs: null,
    overlaps: 0,
    overlapMaxMs: 0,
    lost: 0,
    lostSeen: 0,
    doubled: 0,
    bots: tally,
  };
  const polls: { t: number; whole: boolean }[] = [];
  // Members missing from a poll (or there under a new generation), since when.
  const away = new Map<typeof members[number], number>();
  const stopPolls = watch.onPoll((p) => {
    if (p.t < start) return;
    polls.push({ t: p.t, whole: whole(p) });
    if (p.cluster === null || kind === "kill-cellappmgr") return;
    for (const m of members) {
      const now = p.cluster.processes.find((x) => x.pid === m.pid);
      if ((!now || now.generation !== m.generation) && !away.has(m)) away.set(m, p.t);
    }
  });
  const d = await deliver(kind, { cluster, view, realsOn, random });
  report.target = d.target;
  log(`${kind}: ${d.target}`);
  await sleep(opts.faultSeconds * 1000);
  const healAt = performance.now();
  await d.heal();
  const back = await watch.until(whole, opts.wholeWithinSeconds * 1000);
  report.afterHealMs = back ? Math.round(Math.max(0, back.t - healAt)) : null;
  if (!back && watch.last) {
    log(`${kind}: not whole ${opts.wholeWithinSeconds} s after the heal: ${why(watch.last)}`);
  }
  await sleep(opts.settleSeconds * 1000);
  stopPolls();
  for (let i = 0; i + 1 < polls.length; i++) if (!polls[i].whole) report.notWholeMs += polls[i + 1].t - polls[i].t;
  report.notWholeMs = Math.round(report.notWholeMs);
  const lastTurn = polls.findLastIndex((p, i) => p.whole && i > 0 && !polls[i - 1].whole);
  const brokenAtEnd = polls.length > 0 && !polls[polls.length - 1].whole;
  report.wholeAgainMs = brokenAtEnd ? null : lastTurn < 0 ? 0 : Math.round(polls[lastTurn].t - start);
  const last = watch.last;
  report.lostSeen = last ? baseline.filter((id) => !last.reals.has(id)).length : baseline.length;
  report.doubled = [...watch.doubled].filter((id) => !doubledBefore.has(id)).length;
  log(
    `${kind}: ${away.size} members unlisted, not whole ${report.notWholeMs} ms, ` +
      `whole again ${report.wholeAgainMs ?? "never"} ms, ${report.afterHealMs ?? "n/a"} ms after the heal`,
  );
  return { report, fromWall, toWall: wall(), killed: d.killed, start, away: [...away] };
}
