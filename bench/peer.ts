/**
 * `deno task bench peer [--clients=500] [--seconds=30] [--side=2000,400] [--passes=1] [--floor] [--ours-only]`: the
 * Colyseus peer's scenario (docs/benchmarks.md: clients walking at 5 m/s in a square of side S, 10 moves/s in 10
 * send groups, a counter raised every 5 s, AoI 100 m, 10 Hz, measured after a 5 s warm-up) against a local
 * cluster of one cellapp and one baseapp with one space of S × S in one cell; then, when the peer folder is
 * there, against Colyseus (installed with npm into a temporary folder) in the same run. With `--passes=N` the two
 * run alternately N times per scene (ours first in odd passes, Colyseus first in even ones), and each figure is
 * reported as its median and range, the ratios from the medians; a pass disturbed by other work is flagged and
 * dropped by a rule stated before the first pass (bench/lib/passes.ts). `--floor` also measures the baseapp's
 * socket floor (bench floor's core/ws server at the scene's traffic) and the two-process relay floor (that server
 * relaying through a second process, as a baseapp and a cellapp must, with no game) after each of our passes. Prints and records
 * CPU per client-second (every process of our cluster summed, from /proc, as the peer reads its server), bytes
 * per client-second, move-to-seen latency, resident memory, and the ratios.
 */
import { parseArgs } from "node:util";
import { machineBusySeconds, selfAndReapedSeconds } from "./lib/procs.ts";
import { type InstalledPeer, installPeer, peerFolder, runPeer } from "./lib/colyseus.ts";
import { writeResults } from "./results.ts";
import { giveUpAfter, numberFlag } from "./lib/run.ts";
import { AOI, OBSERVERS, runOurs, WARMUP } from "./lib/peer_ours.ts";
import { passesTable, type Row, type ScenePasses, table } from "./lib/peer_report.ts";
import { describeRule, nearestMedian, PEER_RULE } from "./lib/passes.ts";
import { baseappFloor } from "./floor.ts";

/** Bytes of one client move on the wire, about: what the socket floor's clients send 10 times a second. */
const MOVE_BYTES = 32;

/** Processes of the cluster running now: killed by pid if the run passes its time limit. */
let running: number[] = [];

/** Runs the benchmark and writes its section of bench/RESULTS.md. */
export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      clients: { type: "string", default: "500" },
      seconds: { type: "string", default: "30" },
      side: { type: "string", default: "2000,400" },
      "ours-only": { type: "boolean" },
      passes: { type: "string", default: "1" },
      floor: { type: "boolean" },
    },
  });
  const clients = numberFlag("clients", values.clients, 1, 5000);
  const seconds = numberFlag("seconds", values.seconds, 1, 600);
  const sides = values.side.split(",").map((s) => numberFlag("side", s, 100, 100_000));
  if (sides.length > 2) throw new Error("--side: at most two scenes, e.g. 2000,400");
  const passes = numberFlag("passes", values.passes, 1, 9);
  const log = (l: string) => console.error(`peer bench: ${l}`);
  const from = values["ours-only"] ? null : peerFolder();
  const note = values["ours-only"]
    ? "Colyseus not run (--ours-only): our figures alone."
    : from
    ? ""
    : "The peer folder ../shared/peers/colyseus is not there: our figures alone.";
  if (note) log(note);
  // The whole run is bounded: per scene, logins (up to 90 s), warm-up, window, peer install and run, stops.
  const limitMs = passes * sides.length * (3 * (90 + WARMUP + seconds + 90)) * 1000 + 300_000;
  const stopWatch = giveUpAfter("peer", limitMs, () => [...running, ...baseappFloor.pids()]);
  const rule = describeRule(PEER_RULE);
  if (passes > 1) log(rule);
  const dir = await Deno.makeTempDir({ prefix: "bench-peer-" });
  let peer: InstalledPeer | null = null;
  try {
    if (from) peer = await installPeer(from, log);
    /** One pass of ours at `scene`, then its socket floor and relay floor at the same traffic when asked. */
    const ourPass = async (scene: ScenePasses, pass: number): Promise<void> => {
      log(`S = ${scene.side} m, pass ${pass} of ${passes}: our cluster, ${clients} clients`);
      const ours = await runOurs(clients, seconds, scene.side, dir, (pids) => running = pids);
      scene.ours.push({ index: pass, figures: ours, other: ours.otherCores });
      if (!values.floor) return;
      const down = Math.max(1, Math.round(ours.bytesPerClientSec / 10));
      log(`S = ${scene.side} m, pass ${pass}: the socket floor at ${down} bytes a tick`);
      const busy0 = machineBusySeconds(), own0 = selfAndReapedSeconds(), t0 = performance.now();
      const m = await baseappFloor.measure(clients, seconds, MOVE_BYTES, Math.min(down, 65_535));
      log(`S = ${scene.side} m, pass ${pass}: the two-process relay floor at ${down} bytes a tick`);
      const relay = await baseappFloor.measure(clients, seconds, MOVE_BYTES, Math.min(down, 65_535), "deno-relay");
      const s = (performance.now() - t0) / 1000;
      const other = Math.max(0, (machineBusySeconds() - busy0 - (selfAndReapedSeconds() - own0)) / s);
      scene.floor.push({
        index: pass,
        figures: { msPerClientSec: m.msPerClientSec, relayMsPerClientSec: relay.msPerClientSec, down },
        other,
      });
    };
    const scenes: ScenePasses[] = [];
    for (const side of sides) {
      const scene: ScenePasses = { side, ours: [], peer: [], floor: [] };
      scenes.push(scene);
      for (let pass = 1; pass <= passes; pass++) {
        const oursFirst = pass % 2 === 1;
        if (oursFirst) await ourPass(scene, pass);
        if (peer) {
          log(`S = ${side} m, pass ${pass} of ${passes}: Colyseus, ${clients} clients`);
          const busy0 = machineBusySeconds(), own0 = selfAndReapedSeconds(), t0 = performance.now();
          const figures = await runPeer(peer, { clients, seconds, side, warmup: WARMUP, observers: OBSERVERS });
          const s = (performance.now() - t0) / 1000;
          const other = Math.max(0, (machineBusySeconds() - busy0 - (selfAndReapedSeconds() - own0)) / s);
          scene.peer.push({ index: pass, figures, other });
        }
        if (!oursFirst) await ourPass(scene, pass);
      }
    }
    // One pass per scene in detail: the one whose CPU figure of ours is the median.
    const rows: Row[] = scenes.map((s) => {
      const i = Math.max(0, nearestMedian(s.ours.map((p) => p.figures.cpuMsPerClientSec)));
      const at = s.peer.find((p) => p.index === s.ours[i].index);
      return { side: s.side, ours: s.ours[i].figures, peer: at?.figures ?? null, peerOther: at?.other ?? null };
    });
    const version = rows.find((r) => r.peer)?.peer?.version;
    const summary = passes === 1 ? [] : [
      `${passes} passes per scene, ours and Colyseus alternately (ours first in odd passes)${
        values.floor ? ", the socket floor and the relay floor right after each of ours" : ""
      }. ${rule}`,
      "",
      passesTable(scenes, PEER_RULE),
      "",
      "The pass of each scene whose CPU figure of ours is the median, in detail:",
      "",
    ];
    const md = [
      `The Colyseus peer's scenario (\`../shared/peers/colyseus\`, README): ${clients} clients walking at 5 m/s in a`,
      `square of side S (a 2 % chance per step of a new heading), 10 moves/s in 10 send groups, a counter raised`,
      `every 5 s, AoI ${AOI} m, 10 Hz; ${seconds} s measured after a ${WARMUP} s warm-up; ${OBSERVERS} bots decode and`,
      "measure latency (first sighting of a move by any of them), the others count bytes. Ours: a cluster",
      "(cellappmgr, one cellapp, one baseapp, no NPCs; each process started directly, as a deployment runs them,",
      "without `deno task start`'s parent) with one space of S × S in one cell; CPU and resident memory are every",
      `process of it summed (/proc utime + stime over the window; VmRSS sampled each second). ${
        version ? `Colyseus ${version} (aoi variant, its server process), run right after ours.` : note
      } All on this machine, loopback only; the bots of each side run in one process.`,
      "The last column is the CPU the rest of the machine used meanwhile (share of one core; for Colyseus over its",
      "whole run, joins included): above a few per cent, other work disturbed the figures.",
      "",
      ...summary,
      table(clients, rows),
    ].join("\n");
    console.log(md);
    await writeResults("peer", md);
  } finally {
    stopWatch();
    await peer?.remove();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
