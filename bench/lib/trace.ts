/**
 * The latency breakdown of `deno task bench peer`: joins the servers' move traces (core/trace.ts) with the bots'
 * sightings into where the time between a bot's move and its first sighting went.
 */
import { traceKey, type TraceMark } from "../../core/trace.ts";

/** One move the bots saw first: who moved, to which x, when it was sent and seen (wall-clock ms). */
export interface Sighting {
  id: number;
  x: number;
  sentAt: number;
  seenAt: number;
}

/** The hops of a move, in order. */
export const HOPS = [
  "client to baseapp",
  "baseapp to cellapp",
  "waiting for the tick",
  "tick to witness",
  "witness to batch",
  "batch to baseapp",
  "baseapp relaying",
  "relayed to seen",
] as const;

/** A hop's times over the moves traced whole, in ms. */
export interface HopFigures {
  hop: string;
  p50: number;
  p99: number;
  /** Its mean share of the slowest 1 % of moves. */
  slowMean: number;
}

/** The breakdown: per hop, and how many sightings could be traced through every stage. */
export interface Breakdown {
  traced: number;
  sightings: number;
  hops: HopFigures[];
  total: { p50: number; p99: number };
  /**
   * How long a baseapp took to write a batch of frames to its clients' sockets, from the last frame handed to its
   * connection to the last socket write (p50 / p99 over batches); null without those marks.
   */
  writing: { p50: number; p99: number } | null;
}

/** Reads every `*.trace` file in `dir` and breaks the sampled sightings down by hop; null when none joined. */
export function breakDown(dir: string, sightings: readonly Sighting[]): Breakdown | null {
  const stamps = new Map<string, Map<string, number[]>>([["baseapp", new Map()], ["cellapp", new Map()], [
    "witness",
    new Map(),
  ]]);
  const ticks: number[] = [];
  const marks: Record<TraceMark, number[]> = { batched: [], relaying: [], relayed: [], written: [] };
  for (const f of Deno.readDirSync(dir)) {
    if (!f.name.endsWith(".trace")) continue;
    for (const line of Deno.readTextFileSync(`${dir}/${f.name}`).split("\n")) {
      const [stage, id, key, t] = line.split(" ");
      if (stage === "tick") ticks.push(Number(t));
      if (stage in marks) marks[stage as TraceMark].push(Number(t));
      const m = stamps.get(stage);
      if (!m) continue;
      const k = `${id}:${key}`;
      const list = m.get(k);
      if (list) list.push(Number(t));
      else m.set(k, [Number(t)]);
    }
  }
  ticks.sort((a, b) => a - b);
  for (const list of Object.values(marks)) list.sort((a, b) => a - b);
  const rows: number[][] = [];
  for (const s of sightings) {
    const k = `${s.id}:${traceKey(s.x)}`;
    const t1 = after(stamps.get("baseapp")!.get(k), s.sentAt - 1);
    const t2 = t1 === null ? null : after(stamps.get("cellapp")!.get(k), t1 - 1);
    const t3 = t2 === null ? null : firstAtOrAfter(ticks, t2);
    const t4 = t3 === null ? null : after(stamps.get("witness")!.get(k), t3 - 1);
    const t5 = t4 === null ? null : firstAtOrAfter(marks.batched, t4);
    const t6 = t5 === null ? null : firstAtOrAfter(marks.relaying, t5);
    const t7 = t6 === null ? null : firstAtOrAfter(marks.relayed, t6);
    if (t1 === null || t2 === null || t3 === null || t4 === null || t7 === null || t7 > s.seenAt + 1) continue;
    rows.push([
      t1 - s.sentAt,
      t2 - t1,
      t3 - t2,
      t4 - t3,
      t5! - t4,
      t6! - t5!,
      t7 - t6!,
      s.seenAt - t7,
      s.seenAt - s.sentAt,
    ]);
  }
  if (rows.length === 0) return null;
  const whole = HOPS.length;
  const slow = [...rows].sort((a, b) => b[whole] - a[whole]).slice(0, Math.max(1, Math.ceil(rows.length / 100)));
  const col = (i: number) => rows.map((r) => r[i]).sort((a, b) => a - b);
  return {
    traced: rows.length,
    sightings: sightings.length,
    hops: HOPS.map((hop, i) => {
      const c = col(i);
      return { hop, p50: pct(c, 50), p99: pct(c, 99), slowMean: slow.reduce((n, r) => n + r[i], 0) / slow.length };
    }),
    total: { p50: pct(col(whole), 50), p99: pct(col(whole), 99) },
    writing: writingTimes(marks.relayed, marks.written),
  };
}

/** Each batch's time from relayed to written (both sorted), as p50 / p99; null without marks. */
function writingTimes(relayed: number[], written: number[]): { p50: number; p99: number } | null {
  const times: number[] = [];
  for (const t of relayed) {
    const w = firstAtOrAfter(written, t);
    if (w !== null) times.push(w - t);
  }
  if (times.length === 0) return null;
  times.sort((a, b) => a - b);
  return { p50: pct(times, 50), p99: pct(times, 99) };
}

/** The first time in `list` at or after `t`. */
function after(list: number[] | undefined, t: number): number | null {
  if (!list) return null;
  let best: number | null = null;
  for (const v of list) if (v >= t && (best === null || v < best)) best = v;
  return best;
}

function firstAtOrAfter(sorted: number[], t: number): number | null {
  let lo = 0, hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo < sorted.length ? sorted[lo] : null;
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
