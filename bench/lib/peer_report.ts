/** The tables `deno task bench peer` writes: one pass in detail, and the medians and ranges of several. */
import type { PeerResult } from "./colyseus.ts";
import { type Ours, TRACE_EVERY } from "./peer_ours.ts";
import { figure as f } from "./run.ts";
import { applyRule, type DisturbanceRule, type Kept, medianRatio, type Pass, type Spread, spread } from "./passes.ts";

const ratio = (a: number | null | undefined, b: number | null | undefined) =>
  a === null || a === undefined || !b ? "n/a" : (a / b).toFixed(2);

/** One scene's figures; `peerOther`: share of a core the rest of the machine used during the peer's whole run. */
export interface Row {
  side: number;
  ours: Ours;
  peer: PeerResult | null;
  peerOther: number | null;
}

/** One pass of each scene in detail: both servers side by side, our processes, and where our latency goes. */
export function table(clients: number, rows: Row[]): string {
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
    "",
    "The batch hops follow the tick's frames for one baseapp: the cellapp closes a batch when the tick ends (or a batch",
    "fills), the baseapp relays it to its clients' connections, and \"relayed to seen\" is the rest: the baseapp's",
    "socket writes, the loopback and the bot process, which takes the tick's frames of all its bots in turn.",
    ...traced.filter(({ ours }) => ours.breakdown!.writing).map(({ side, ours }) => {
      const w = ours.breakdown!.writing!;
      return `At S = ${f(side)} m the baseapp wrote a batch's frames to the sockets within ${f(w.p50, 1)} ms p50, ` +
        `${f(w.p99, 1)} ms p99, after relaying it.`;
    }),
  ];
}

/** Every pass of one scene: ours, Colyseus's and the socket floor's, in the order run. */
export interface ScenePasses {
  side: number;
  ours: Pass<Ours>[];
  peer: Pass<PeerResult>[];
  /**
   * Measured right after each of our passes (`--floor`), at the scene's traffic: the core/ws server alone (on the
   * epoll sockets the baseapp uses), and the
   * two-process relay (bench floor's `deno-relay`: the least a baseapp and a cellapp cost between them, no game).
   */
  floor: Pass<{ msPerClientSec: number; relayMsPerClientSec: number; down: number }>[];
}

/** A spread as a table cell: the median, and the range when there were several passes. */
function cell(s: Spread, d: number): string {
  if (s.median === null) return "n/a";
  return s.n > 1 ? `${f(s.median, d)} (${f(s.min, d)}–${f(s.max, d)})` : f(s.median, d);
}

const peerCpuMs = (p: PeerResult) =>
  p.serverCpuSecPerClientPerSec === null ? null : p.serverCpuSecPerClientPerSec * 1000;

/** The figures compared, each with how to read it from either side and the aim for ours against Colyseus's median. */
const FIGURES: {
  name: string;
  d: number;
  ours: (o: Ours) => number | null;
  peer: (p: PeerResult) => number | null;
  aim: string;
}[] = [
  { name: "CPU ms per client-s", d: 3, ours: (o) => o.cpuMsPerClientSec, peer: peerCpuMs, aim: "≤ 0.75" },
  {
    name: "bytes per client-s",
    d: 0,
    ours: (o) => o.bytesPerClientSec,
    peer: (p) => p.bytesPerClientPerSec,
    aim: "≤ 0.4",
  },
  { name: "p50 move-to-seen, ms", d: 1, ours: (o) => o.p50, peer: (p) => p.latencyP50Ms, aim: "within 10 ms" },
  { name: "p99 move-to-seen, ms", d: 1, ours: (o) => o.p99, peer: (p) => p.latencyP99Ms, aim: "≤ 1" },
  { name: "resident MB (all processes)", d: 0, ours: (o) => o.rssMB, peer: (p) => p.serverRssMB, aim: "≤ 1.5" },
];

/** The passes the rule keeps for one server, and a note of those it flagged. */
function kept<T>(passes: Pass<T>[], rule: DisturbanceRule): Kept<T> & { note: string } {
  const k = applyRule(passes, rule);
  const flagged = k.disturbed.map((p) => `${p.index} (${f((p.other ?? 0) * 100, 0)} %)`).join(", ");
  const note = k.disturbed.length === 0
    ? ""
    : k.marked
    ? `disturbed, kept for want of clean ones: ${flagged}`
    : `dropped as disturbed: ${flagged}`;
  return { ...k, note };
}

/** Medians and ranges per scene over the passes the rule keeps, with the ratios of the medians; then every pass. */
export function passesTable(scenes: ScenePasses[], rule: DisturbanceRule): string {
  const out: string[] = [
    "| scene | figure | ours: median (min–max) | Colyseus: median (min–max) | ratio of medians | aim |",
    "|---|---|---:|---:|---:|---|",
  ];
  const notes: string[] = [];
  for (const s of scenes) {
    const o = kept(s.ours, rule), p = kept(s.peer, rule);
    if (o.note) notes.push(`S = ${f(s.side)} m, ours: ${o.note}.`);
    if (p.note) notes.push(`S = ${f(s.side)} m, Colyseus: ${p.note}.`);
    for (const fig of FIGURES) {
      const a = spread(o.kept.map((x) => fig.ours(x.figures)));
      const b = spread(p.kept.map((x) => fig.peer(x.figures)));
      const r = medianRatio(a, b);
      const diff = a.median !== null && b.median !== null
        ? ` (${a.median >= b.median ? "+" : ""}${f(a.median - b.median, 1)} ms)`
        : "";
      out.push(
        `| S = ${f(s.side)} m | ${fig.name} | ${cell(a, fig.d)} | ${cell(b, fig.d)} | ${
          r === null ? "n/a" : r.toFixed(2)
        }${fig.name.startsWith("p50") ? diff : ""} | ${fig.aim} |`,
      );
    }
    if (s.floor.length > 0) {
      const fl = kept(s.floor, rule);
      const floor = spread(fl.kept.map((x) => x.figures.msPerClientSec));
      const base = spread(o.kept.map((x) => (x.figures.cores.baseapp ?? 0) * 1000 / x.figures.connected));
      const r = medianRatio(base, floor);
      out.push(
        `| S = ${f(s.side)} m | baseapp CPU ms per client-s / its socket floor (core/ws on epoll sockets at ${
          f(s.floor[0].figures.down)
        } bytes a tick) | ${cell(base, 3)} | floor ${cell(floor, 3)} | ${r === null ? "n/a" : r.toFixed(2)} | ≤ 1.2 |`,
      );
      const relay = spread(fl.kept.map((x) => x.figures.relayMsPerClientSec));
      const peerCpu = spread(p.kept.map((x) => peerCpuMs(x.figures)));
      const rr = medianRatio(relay, peerCpu);
      out.push(
        `| S = ${f(s.side)} m | two-process relay floor, no game (CPU ms per client-s) / Colyseus's CPU | relay floor ${
          cell(relay, 3)
        } | ${cell(peerCpu, 3)} | ${rr === null ? "n/a" : rr.toFixed(2)} | (the least ours can be) |`,
      );
    }
  }
  const passes = [
    "",
    "Every pass, in the order run (CPU ms per client-s; the share of one core the rest of the machine used meanwhile):",
    "",
    "| scene | pass | ours | Colyseus | socket floor | relay floor | other work, ours / Colyseus |",
    "|---|---:|---:|---:|---:|---:|---|",
    ...scenes.flatMap((s) =>
      s.ours.map((o, i) => {
        const p = s.peer[i], fl = s.floor[i];
        const other = (x: Pass<unknown> | undefined) =>
          x === undefined || x.other === null
            ? "n/a"
            : `${f(x.other * 100, 0)} %${x.other > rule.otherAbove ? " ⚑" : ""}`;
        return `| S = ${f(s.side)} m | ${i + 1} | ${f(o.figures.cpuMsPerClientSec, 3)} | ${
          p ? f(peerCpuMs(p.figures), 3) : "n/a"
        } | ${fl ? f(fl.figures.msPerClientSec, 3) : "n/a"} | ${fl ? f(fl.figures.relayMsPerClientSec, 3) : "n/a"} | ${
          other(o)
        } / ${other(p)} |`;
      })
    ),
  ];
  return [...out, ...(notes.length ? ["", ...notes] : []), ...passes].join("\n");
}
