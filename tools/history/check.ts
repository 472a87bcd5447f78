/**
 * The history checker: from the claim logs of a whole run (read.ts), proves that no entity was real in two places
 * at once, no base was held by two baseapps at once, no account had two bases at once, and that what existed
 * before a fault exists after it.
 *
 * When a claim counts: from its start line to its end line, or to the end of its process: its `close` line, or
 * for a process killed without one, the stated kill time (CheckOptions.kills) or else its last line (it flushes
 * every HISTORY_FLUSH_MS, beats included, so what a kill -9 loses is at most that much of the end). Within that,
 * only while its process runs and acts: a gap of more than `stallMs` between two of its lines is a stall (SIGSTOP,
 * a frozen machine) in which it did nothing, and between `hold` and `unhold` its reals and bases do not act (a
 * cellapp or baseapp whose lease lapsed, or that doubts itself after a stall, holds everything back).
 */
import { HISTORY_STALL_MS } from "../../core/history.ts";
import type { ProcessLog } from "./read.ts";
import { intersect, length, type Spans, subtract } from "./spans.ts";

/** How to judge a run. */
export interface CheckOptions {
  /** A longer gap between two lines of a process is a stall (default HISTORY_STALL_MS). */
  stallMs?: number;
  /**
   * How long two reals of one entity may overlap (default 0: the old real stops acting when its hand-over
   * starts, before the new one is made real).
   */
  realToleranceMs?: number;
  /** How long two bases of one account, or one base in two baseapps, may overlap (default 0). */
  baseToleranceMs?: number;
  /**
   * Whether a process's reals and bases count while it holds them back (`hold` to `unhold`, or to the fence's drop).
   * Default false: what acts for them waits (cell/fence.ts, base/cluster/base_fence.ts). True shows that window as overlaps.
   */
  heldActs?: boolean;
  /** Processes killed without a `close` line: pid -> wall-clock ms of the kill. */
  kills?: Readonly<Record<number, number>>;
  /** Check losses across a fault: what existed at `before` must exist after `after` (wall-clock ms). */
  loss?: { before: number; after: number };
}

/** One claim: an entity real, or a base held, in one process over a time. */
export interface Claim {
  kind: "real" | "base";
  id: number;
  /** The account of a player's base; "" otherwise. */
  account: string;
  role: string;
  pid: number;
  from: number;
  /** When it ended: its end line, or the end of its process. */
  to: number;
  /** Why it ended (the end line's reason), or how its process ended. */
  why: string;
  /** The parts of [from, to) in which it counted (its process ran, its reals were not held). */
  active: Spans;
}

/** Two claims that counted at the same time. */
export interface Overlap {
  /** real: one entity real twice; base: one base in two baseapps; account: one account with two bases. */
  kind: "real" | "base" | "account";
  /** The entity id, or the account. */
  key: string;
  a: Claim;
  b: Claim;
  /** The first instant both counted. */
  at: number;
  /** How long both counted, in ms. */
  ms: number;
}

/** Something that existed before the fault and not after it. */
export interface Lost {
  kind: "real" | "base";
  id: number;
  /** Its last claim. */
  last: Claim;
}

/** What the checker found. */
export interface HistoryReport {
  overlaps: Overlap[];
  lost: Lost[];
  summary: {
    processes: number;
    /** Claims by kind, and distinct entities, bases and accounts. */
    realClaims: number;
    baseClaims: number;
    entities: number;
    bases: number;
    accounts: number;
    /** The first and last line's times over all processes. */
    from: number;
    to: number;
    /** Processes that ended without a `close` line (killed), and stalls seen. */
    unclosed: number;
    stalls: number;
  };
}

/** The claims of every process, and how many stalls were seen. */
export function claimsOf(logs: readonly ProcessLog[], opts: CheckOptions = {}): { claims: Claim[]; stalls: number } {
  const claims: Claim[] = [];
  let stalls = 0;
  for (const log of logs) {
    const r = processClaims(log, opts);
    claims.push(...r.claims);
    stalls += r.stalls;
  }
  return { claims, stalls };
}

function processClaims(log: ProcessLog, opts: CheckOptions): { claims: Claim[]; stalls: number } {
  const stallMs = opts.stallMs ?? HISTORY_STALL_MS;
  const recs = log.records;
  const closed = recs.find((r) => r.k === "close");
  const lastT = recs[recs.length - 1].t;
  const kill = opts.kills?.[log.pid];
  const end = closed ? closed.t : Math.max(lastT, kill ?? lastT);
  const ending = closed ? "its process closed" : kill !== undefined ? "its process was killed" : "its log ends";
  // Running: between consecutive lines no further apart than stallMs (a stated kill time is one more line).
  const times = recs.map((r) => r.t).filter((t) => t <= end);
  if (!closed && end > lastT) times.push(end);
  const running: Spans = [];
  let stalls = 0;
  for (let i = 0; i + 1 < times.length; i++) {
    if (times[i + 1] - times[i] > stallMs) {
      stalls++;
      continue;
    }
    const last = running[running.length - 1];
    if (last && last[1] >= times[i]) last[1] = times[i + 1];
    else running.push([times[i], times[i + 1]]);
  }
  const held: Spans = [];
  let holdFrom: number | null = null;
  const claims: Claim[] = [];
  const open = new Map<string, { kind: "real" | "base"; id: number; account: string; from: number }[]>();
  const finish = (key: string, to: number, why: string) => {
    for (const c of open.get(key) ?? []) {
      claims.push({ ...c, role: log.role, pid: log.pid, to, why, active: [] });
    }
    open.delete(key);
  };
  for (const r of recs) {
    if (r.t > end) break;
    switch (r.k) {
      case "real":
      case "base": {
        const key = `${r.k}:${r.id}`;
        const list = open.get(key) ?? [];
        list.push({ kind: r.k, id: r.id, account: r.k === "base" ? r.account : "", from: r.t });
        open.set(key, list);
        break;
      }
      case "unreal":
        finish(`real:${r.id}`, r.t, r.why);
        break;
      case "unbase":
        finish(`base:${r.id}`, r.t, r.why);
        break;
      case "hold":
        holdFrom ??= r.t;
        break;
      case "unhold":
        if (holdFrom !== null) held.push([holdFrom, r.t]);
        holdFrom = null;
        break;
    }
  }
  if (holdFrom !== null) held.push([holdFrom, end]);
  for (const key of [...open.keys()]) finish(key, end, ending);
  const acting = opts.heldActs ? running : subtract(running, held);
  for (const c of claims) c.active = intersect([[c.from, c.to]], acting);
  return { claims, stalls };
}

/** Checks the claim logs of a run; see the module comment for when a claim counts. */
export function checkHistory(logs: readonly ProcessLog[], opts: CheckOptions = {}): HistoryReport {
  const { claims, stalls } = claimsOf(logs, opts);
  const realTol = opts.realToleranceMs ?? 0;
  const baseTol = opts.baseToleranceMs ?? 0;
  const overlaps: Overlap[] = [];
  const groups = (pick: (c: Claim) => string | null) => {
    const m = new Map<string, Claim[]>();
    for (const c of claims) {
      const k = pick(c);
      if (k !== null) m.set(k, [...m.get(k) ?? [], c]);
    }
    return m;
  };
  const pairs = (
    kind: Overlap["kind"],
    m: Map<string, Claim[]>,
    tol: number,
    apart: (a: Claim, b: Claim) => boolean,
  ) => {
    for (const [key, list] of m) {
      for (let i = 0; i < list.length; i++) {
        for (let j = i + 1; j < list.length; j++) {
          const [a, b] = list[i].from <= list[j].from ? [list[i], list[j]] : [list[j], list[i]];
          if (!apart(a, b)) continue;
          const both = intersect(a.active, b.active);
          const ms = length(both);
          if (both.length > 0 && ms > tol) overlaps.push({ kind, key, a, b, at: both[0][0], ms });
        }
      }
    }
  };
  pairs("real", groups((c) => c.kind === "real" ? String(c.id) : null), realTol, () => true);
  pairs("base", groups((c) => c.kind === "base" ? String(c.id) : null), baseTol, (a, b) => a.pid !== b.pid);
  pairs(
    "account",
    groups((c) => c.kind === "base" && c.account !== "" ? c.account : null),
    baseTol,
    (a, b) => a.pid !== b.pid || a.id !== b.id,
  );
  overlaps.sort((x, y) => x.at - y.at);

  const lost: Lost[] = [];
  if (opts.loss) {
    const { before, after } = opts.loss;
    for (const kind of ["real", "base"] as const) {
      const meant = kind === "real" ? "destroyed" : "removed";
      for (const list of groups((c) => c.kind === kind ? String(c.id) : null).values()) {
        const existed = list.some((c) => c.from <= before && c.to > before);
        if (!existed) continue;
        const ended = list.some((c) => c.to > before && c.why === meant);
        const after_ = list.some((c) => c.active.some(([, to]) => to > after));
        if (ended || after_) continue;
        const last = list.reduce((x, y) => (y.to > x.to ? y : x));
        lost.push({ kind, id: last.id, last });
      }
    }
  }

  const all = logs.flatMap((l) => [l.records[0].t, l.records[l.records.length - 1].t]);
  return {
    overlaps,
    lost,
    summary: {
      processes: logs.length,
      realClaims: claims.filter((c) => c.kind === "real").length,
      baseClaims: claims.filter((c) => c.kind === "base").length,
      entities: new Set(claims.filter((c) => c.kind === "real").map((c) => c.id)).size,
      bases: new Set(claims.filter((c) => c.kind === "base").map((c) => c.id)).size,
      accounts: new Set(claims.filter((c) => c.account !== "").map((c) => c.account)).size,
      from: Math.min(...all),
      to: Math.max(...all),
      unclosed: logs.filter((l) => !l.records.some((r) => r.k === "close")).length,
      stalls,
    },
  };
}

/** The report as text: a summary line, then one line per overlap and per loss. */
export function formatReport(r: HistoryReport): string {
  const s = r.summary;
  const at = (t: number) => new Date(t).toISOString().slice(11, 23);
  const where = (c: Claim) => `${c.role} ${c.pid} [${at(c.from)}-${at(c.to)} ${c.why}]`;
  const lines = [
    `${s.processes} processes (${s.unclosed} killed, ${s.stalls} stalls), ${s.entities} entities in ` +
    `${s.realClaims} real claims, ${s.bases} bases in ${s.baseClaims} claims, ${s.accounts} accounts, ` +
    `${at(s.from)}-${at(s.to)}: ${r.overlaps.length} overlaps, ${r.lost.length} lost`,
  ];
  for (const o of r.overlaps) {
    const what = o.kind === "real" ? `entity ${o.key} real` : o.kind === "base" ? `base ${o.key}` : `account ${o.key}`;
    lines.push(
      `overlap: ${what} twice for ${o.ms.toFixed(1)} ms from ${at(o.at)}: ${where(o.a)} and ${where(o.b)}` +
        (o.kind === "account" ? ` (bases ${o.a.id} and ${o.b.id})` : ""),
    );
  }
  for (const l of r.lost) lines.push(`lost: ${l.kind === "real" ? "entity" : "base"} ${l.id}, last ${where(l.last)}`);
  return lines.join("\n");
}
