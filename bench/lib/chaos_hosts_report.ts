/**
 * `deno task bench chaos --hosts [--cellapps=3] [--baseapps=2] [--cells=4] [--npcs=300] [--bots=40]
 * [--faults=cut-cellapp,cellapp-from-mgr,…] [--fault-seconds=10] [--settle-seconds=3] [--seed=12] [--json]`: the
 * chaos scene on test hosts with network faults (chaos_hosts.ts); writes the section chaos_hosts of
 * bench/RESULTS.md. Needs root, `ip` and Debian's postgresql package.
 */
import { parseArgs } from "node:util";
import { HostsCluster } from "../../testing/hosts_cluster.ts";
import { postgresMissing } from "../../testing/postgres.ts";
import { writeResults } from "../results.ts";
import { HOST_FAULT_KINDS, HOST_FAULT_TEXT, type HostFaultKind } from "./chaos_hosts_faults.ts";
import { HOSTS_CHAOS_DEFAULTS, type HostsChaosReport, PLAYING_WITHIN_MS, runHostsChaos } from "./chaos_hosts.ts";
import { giveUpAfter, numberFlag } from "./run.ts";

/** Parses `args` (without --hosts), runs the scene and writes its results section. */
export async function runHostsBench(args: string[]): Promise<void> {
  const d = HOSTS_CHAOS_DEFAULTS;
  const { values } = parseArgs({
    args,
    options: {
      cellapps: { type: "string", default: String(d.cellapps) },
      baseapps: { type: "string", default: String(d.baseapps) },
      cells: { type: "string", default: String(d.cells) },
      npcs: { type: "string", default: String(d.npcs) },
      bots: { type: "string", default: String(d.bots) },
      faults: { type: "string", default: d.faults.join(",") },
      "fault-seconds": { type: "string", default: String(d.faultSeconds) },
      "settle-seconds": { type: "string", default: String(d.settleSeconds) },
      seed: { type: "string", default: String(d.seed) },
      json: { type: "boolean" },
    },
  });
  const why = (await HostsCluster.unavailable()) ?? postgresMissing();
  if (why) throw new Error(`chaos --hosts: ${why}`);
  const faults = values.faults.split(",").filter(Boolean).map((f) => {
    if (!(HOST_FAULT_KINDS as readonly string[]).includes(f)) {
      throw new Error(`--faults: unknown fault ${JSON.stringify(f)}; known: ${HOST_FAULT_KINDS.join(", ")}`);
    }
    return f as HostFaultKind;
  });
  if (faults.length === 0 || faults.length > 30) throw new Error(`--faults: give 1 to 30 faults`);
  const opts = {
    ...d,
    cellapps: numberFlag("cellapps", values.cellapps, 2, 8),
    baseapps: numberFlag("baseapps", values.baseapps, 1, 4),
    cells: numberFlag("cells", values.cells, 2, 16),
    npcs: numberFlag("npcs", values.npcs, 0, 5000),
    bots: numberFlag("bots", values.bots, 1, 500),
    faults,
    faultSeconds: numberFlag("fault-seconds", values["fault-seconds"], 1, 120),
    settleSeconds: numberFlag("settle-seconds", values["settle-seconds"], 0, 120),
    seed: numberFlag("seed", values.seed, 0, 2 ** 31),
    log: (l: string) => console.error(`chaos --hosts: ${l}`),
  };
  // Bounded: start-up, then per fault its time, the wait for the world to be whole, the settle and some slack.
  const limitS = 180 + faults.length * (opts.faultSeconds + opts.wholeWithinSeconds + opts.settleSeconds + 20);
  const stopWatch = giveUpAfter("chaos --hosts", limitS * 1000, () => []);
  let report: HostsChaosReport;
  try {
    report = await runHostsChaos(opts);
  } finally {
    stopWatch();
  }
  if (values.json) console.log(JSON.stringify({ ...report, logs: undefined, history: report.history.summary }));
  if (report.history.overlaps.length || report.history.lost.length) {
    console.error(report.historyText);
    console.error(report.logs.join("\n"));
  }
  const md = hostsMarkdown(report);
  console.log(md);
  await writeResults("chaos_hosts", md);
}

/** Lines of the checker's findings the results show. */
const SHOWN = 12;

const ms = (v: number | null) => v === null ? "none" : `${v}`;

/** The results section: the scene, one row per fault, the checker's verdict. */
export function hostsMarkdown(r: HostsChaosReport): string {
  const o = r.options;
  const rows = r.faults.map((f, i) =>
    `| ${i + 1} | ${f.at} s | ${f.kind} | ${f.target} | ${ms(f.detectionMs)}${f.detected ? ` (${f.detected})` : ""}${
      f.held ? `; held ${f.held}` : ""
    } | ${f.notWholeMs} | ${f.wholeAgainMs ?? "not whole"} / ${f.afterHealMs ?? "n/a"} | ${f.overlaps}${
      f.overlaps ? ` (${f.overlapMaxMs} ms)` : ""
    } | ${f.lost} | ${f.lostSeen} / ${f.doubled} | ${f.bots.resumed} / ${f.bots.closed} | ${f.bots.undone} (${f.bots.maxDrop}) | ${f.bots.unreflected} (${f.bots.maxUnreflected}) |`
  );
  const kinds = [...new Set(r.faults.map((f) => f.kind))].map((k) => `${k}: ${HOST_FAULT_TEXT[k]}`).join("; ");
  const s = r.history.summary;
  const found = r.historyText.split("\n").slice(1, 1 + SHOWN).join("\n");
  return `\`deno task bench chaos --hosts\`: every process on a test host of its own (a network namespace,
testing/hosts.ts): a cellappmgr, ${o.cellapps} cellapps, ${o.baseapps} baseapps (\`--autosave=1\`) on one
PostgreSQL server on another host; one ${o.side} m x ${o.side} m space in ${o.cells} cells with ${o.npcs} NPCs and
${o.bots} bots (SDK clients, through the client host, resuming by themselves) raising their counters every
${o.raiseEvery} s. One fault after another, each lasting ${o.faultSeconds} s, then healed; the next starts
${o.settleSeconds} s after the world is whole again (or ${o.wholeWithinSeconds} s after the heal). Faults: ${kinds}.
Every cellapp and baseapp writes its claims (\`--history\`); after the run the history checker (tools/history/) finds
overlaps (an entity real twice, an account with two bases) and losses (a claim at the fault with none after its
window).

Detection: ms from the fault to the first poll of /api/cluster (every ${o.pollMs} ms) without a member it listed
before (or lists it under a new generation) that was killed or logs that it was fenced: declared dead; "none": it
declared no member dead; "held": members it stopped listing that came back without being fenced. Whole: every entity
of the start real exactly once on a listed cellapp, and every bot connected and its counter changed in the last
${
    PLAYING_WITHIN_MS / 1000
  } s. A cellappmgr not answering counts as not whole. Not whole: ms of the fault's window (to the next fault) not whole. Whole again: ms from the
fault to the world turning whole for the last time in its window / ms from the heal to the first whole poll. Lost
(checker): per the claim logs; lost / doubled (admin): entities of the start not real at the window's end / real on
two cellapps in two polls in a row. Confirmed then undone: a bot's counter seen lower than it saw before (confirmed
then undone), summed (the largest drop). Raises lost: raises a bot sent that its counter never showed.

| # | at | fault | target | detection ms | not whole ms | whole again ms / after heal | overlaps | lost (checker) | lost / doubled (admin) | bots resumed / gone | confirmed then undone (max) | raises lost (max) |
| ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
${rows.join("\n")}

| total | value | aim |
| --- | ---: | --- |
| overlaps (history checker, whole run) | ${r.history.overlaps.length} | 0 |
| lost (history checker, first fault to the end) | ${r.history.lost.length} | 0 |
| entities of the start not real at the end (admin) | ${r.lostSeen.length} | 0 |
| entities doubled (admin, two polls in a row) | ${r.doubled.length} | 0 |
| bots connected at the end | ${r.botsConnectedAtEnd} / ${r.botsStarted}${
    r.botsGoneWhy.length ? ` (gone: ${r.botsGoneWhy.join("; ").replaceAll("|", "/")})` : ""
  } | all |
| claim logs checked | ${s.processes} processes (${s.stalls} stalls), ${s.entities} entities in ${s.realClaims} real claims, ${s.accounts} accounts | |
| run time | ${r.seconds} s | |${
    found ? `\n\nWhat the history checker found (the first ${SHOWN} lines):\n\n\`\`\`\n${found}\n\`\`\`` : ""
  }`;
}
