/**
 * One fuzz run against a cluster: every process port and the client endpoint
 * at once, in parts, with each process's resident memory read before and after
 * each part (once settled), so that growth that stops (V8 sizing its heap) can
 * be told from growth that goes on.
 */
import { fuzzWirePort, type WireFuzzReport } from "./wire.ts";
import { type ClientFuzzReport, fuzzClientPort } from "./client.ts";

/** A process of the cluster to fuzz. */
export interface FuzzTarget {
  name: string;
  /** HOST:PORT of its process port. */
  address: string;
  pid: number;
}

/** What to fuzz and how much. */
export interface FuzzRunOptions {
  targets: FuzzTarget[];
  /** ws:// URL of a baseapp whose players may misbehave without being cut off (a huge --abuse-limit). */
  clientUrl: string;
  secret: string;
  seed: number;
  /** Inputs per process port, and client messages. */
  count: number;
  /** Each part of each fuzzer stops after this long (with fewer inputs). */
  deadlineMs: number;
  /** Parts the inputs are sent in, memory read after each (default 2). */
  parts?: number;
}

/** Totals of one fuzzer over the run. */
export interface FuzzTotals {
  name: string;
  inputs: number;
  ms: number;
  /** Process ports only: connections opened and dropped by the process, and its most frequent reasons. */
  connections?: number;
  dropped?: number;
  reasons?: [string, number][];
}

/** The steepest rise of a target's resident memory between two readings during the run (one every 200 ms). */
export interface RssJump {
  /** Bytes before and after. */
  from: number;
  to: number;
  /** Date.now() of the later reading: the process's log lines around it tell what it was doing. */
  at: number;
}

/** What a run did: totals per fuzzer, and RSS per target: before, then after each part. */
export interface FuzzRunReport {
  totals: FuzzTotals[];
  rss: Map<string, number[]>;
  /** Per target: its highest reading during each part (until the part's settled reading). */
  partPeaks: Map<string, number[]>;
  /** Per target: its steepest rise. */
  jump: Map<string, RssJump>;
  /** Whether each part reached its count (false: a deadline cut it short). */
  complete: boolean;
}

/** Resident memory of process `pid` in bytes (Linux). */
export function rssOf(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(Deno.readTextFileSync(`/proc/${pid}/status`))![1]) * 1024;
}

/**
 * Resident memory of `pid` once it has settled after a burst of inputs: the least of its readings over `ms`. Read at
 * one instant, RSS also holds what the process is still working through (connections closing, garbage not yet
 * collected), which is not memory it keeps.
 */
async function settledRss(pid: number, ms = 3000): Promise<number> {
  let least = rssOf(pid);
  for (let waited = 0; waited < ms; waited += 250) {
    await new Promise((r) => setTimeout(r, 250));
    least = Math.min(least, rssOf(pid));
  }
  return least;
}

/** Fuzzes every target port and the client endpoint at once, `count` inputs each, in `parts` parts. */
export async function runFuzz(o: FuzzRunOptions): Promise<FuzzRunReport> {
  const parts = o.parts ?? 2;
  const rss = new Map(o.targets.map((t) => [t.name, [rssOf(t.pid)]]));
  const totals = new Map<string, FuzzTotals>();
  let complete = true;
  const jump = new Map<string, RssJump>();
  const last = new Map(o.targets.map((t) => [t.name, rss.get(t.name)![0]]));
  // The last entry of each is the part under way.
  const partPeaks = new Map(o.targets.map((t) => [t.name, [rss.get(t.name)![0]]]));
  const raise = (name: string, now: number) => {
    const peaks = partPeaks.get(name)!;
    peaks[peaks.length - 1] = Math.max(peaks[peaks.length - 1], now);
  };
  const sampler = setInterval(() => {
    for (const t of o.targets) {
      let now: number;
      try {
        now = rssOf(t.pid);
      } catch {
        continue; // the process is gone: the test says so
      }
      const before = last.get(t.name)!;
      last.set(t.name, now);
      raise(t.name, now);
      const j = jump.get(t.name);
      if (!j || now - before > j.to - j.from) jump.set(t.name, { from: before, to: now, at: Date.now() });
    }
  }, 200);
  const add = (name: string, rep: WireFuzzReport | ClientFuzzReport, want: number) => {
    const t = totals.get(name) ?? { name, inputs: 0, ms: 0 };
    t.inputs += rep.inputs;
    t.ms += rep.ms;
    if ("connections" in rep) {
      t.connections = (t.connections ?? 0) + rep.connections;
      t.dropped = (t.dropped ?? 0) + rep.dropped;
      t.reasons = rep.reasons.slice(0, 3);
    }
    totals.set(name, t);
    if (rep.inputs < want) complete = false;
  };
  try {
    for (let part = 1; part <= parts; part++) {
      const count = Math.floor((o.count * part) / parts) - Math.floor((o.count * (part - 1)) / parts);
      const seed = o.seed + 10 * part;
      const [wire, client] = await Promise.all([
        Promise.all(
          o.targets.map((t, i) =>
            fuzzWirePort({ address: t.address, secret: o.secret, seed: seed + i, count, deadlineMs: o.deadlineMs })
          ),
        ),
        fuzzClientPort({ url: o.clientUrl, seed: seed + 9, count, deadlineMs: o.deadlineMs }),
      ]);
      wire.forEach((rep, i) => add(`${o.targets[i].name} port`, rep, count));
      add("client endpoint", client, count);
      const settled = await Promise.all(o.targets.map((t) => settledRss(t.pid)));
      o.targets.forEach((t, i) => {
        rss.get(t.name)!.push(settled[i]);
        raise(t.name, settled[i]);
        if (part < parts) partPeaks.get(t.name)!.push(0);
      });
    }
  } finally {
    clearInterval(sampler);
  }
  return { totals: [...totals.values()], rss, partPeaks, jump, complete };
}
