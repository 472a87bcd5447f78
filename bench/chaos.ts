/**
 * `deno task bench chaos [--cellapps=3] [--baseapps=2] [--cells=4] [--npcs=1000] [--bots=200] [--seconds=180]
 * [--kill-cellapps=4] [--stop-cellapps=1] [--stop-seconds=10] [--kill-baseapps=1] [--kill-mgr=1] [--seed=12]
 * [--postgres | --db=postgres://…] [--json]`: the chaos scene. Bots raise their counters every second while a seeded schedule kills cellapps,
 * a baseapp and the cellappmgr (each started again on its ports, as an operator or the reviver would) and stops a
 * cellapp past the dead timeout; per fault it reports detection, restore times, entities lost or doubled, bots
 * resumed, and counter progress lost. Writes its section of bench/RESULTS.md. The baseapps share one Deno KV file, or
 * with --db one PostgreSQL database, or with --postgres a PostgreSQL server the bench starts for the run
 * (testing/postgres.ts; root and Debian's postgresql package); those write the section chaos_postgres.
 * With --hosts: the scene on test hosts with network faults too (lib/chaos_hosts_report.ts has its flags).
 */
import { parseArgs } from "node:util";
import { CHAOS_DEFAULTS, type ChaosReport, type FaultKind, runChaos } from "./lib/chaos_run.ts";
import { writeResults } from "./results.ts";
import { runHostsBench } from "./lib/chaos_hosts_report.ts";
import { PgServer, postgresMissing } from "../testing/postgres.ts";

/** Runs the scene and writes its section of bench/RESULTS.md. */
export async function run(args: string[]): Promise<void> {
  if (args.includes("--hosts")) return await runHostsBench(args.filter((a) => a !== "--hosts"));
  const d = CHAOS_DEFAULTS;
  const { values } = parseArgs({
    args,
    options: {
      cellapps: { type: "string", default: String(d.cellapps) },
      baseapps: { type: "string", default: String(d.baseapps) },
      cells: { type: "string", default: String(d.cells) },
      npcs: { type: "string", default: String(d.npcs) },
      bots: { type: "string", default: String(d.bots) },
      seconds: { type: "string", default: String(d.seconds) },
      "kill-cellapps": { type: "string", default: "4" },
      "stop-cellapps": { type: "string", default: "1" },
      "stop-seconds": { type: "string", default: String(d.stopSeconds) },
      "kill-baseapps": { type: "string", default: "1" },
      "kill-mgr": { type: "string", default: "1" },
      seed: { type: "string", default: String(d.seed) },
      json: { type: "boolean" },
      postgres: { type: "boolean" },
      db: { type: "string" },
    },
  });
  if (values.postgres && values.db) throw new Error("--postgres starts a server of its own: give it or --db, not both");
  const missing = values.postgres ? postgresMissing() : null;
  if (missing) throw new Error(`--postgres: ${missing}`);
  await using pg = values.postgres ? await PgServer.start() : null;
  const db = pg?.url ?? values.db ?? null;
  const n = (k: keyof typeof values) => {
    const v = Number(values[k]);
    if (!Number.isFinite(v) || v < 0) throw new Error(`--${k}=${values[k]}: expected a number of at least 0`);
    return v;
  };
  const faults: FaultKind[] = [
    ...Array<FaultKind>(n("kill-cellapps")).fill("kill-cellapp"),
    ...Array<FaultKind>(n("kill-baseapps")).fill("kill-baseapp"),
    ...Array<FaultKind>(n("kill-mgr")).fill("kill-cellappmgr"),
    ...Array<FaultKind>(n("stop-cellapps")).fill("stop-cellapp"),
  ];
  const report = await runChaos({
    ...d,
    cellapps: n("cellapps"),
    baseapps: n("baseapps"),
    cells: n("cells"),
    npcs: n("npcs"),
    bots: n("bots"),
    seconds: n("seconds"),
    stopSeconds: n("stop-seconds"),
    seed: n("seed"),
    faults,
    db,
    log: (l) => console.error(`chaos: ${l}`),
  });
  if (values.json) console.log(JSON.stringify({ ...report, logs: undefined }));
  // What the processes warned of, for a run that lost or doubled something.
  if (report.lost.length || report.doubled.length) console.error(report.logs.join("\n"));
  const md = markdown(report);
  console.log(md);
  await writeResults(db ? "chaos_postgres" : "chaos", md);
}

const ms = (v: number | null) => v === null ? "n/a" : `${v}`;

/** The results section: the scene, one row per fault, and the totals against the aims. */
export function markdown(r: ChaosReport): string {
  const o = r.options;
  const rows = r.faults.map((f) =>
    `| ${f.at} s | ${f.kind} | ${f.target} | ${ms(f.detectionMs)} | ${ms(f.restoreP50Ms)} / ${ms(f.restoreP99Ms)} / ${
      ms(f.restoreMaxMs)
    } | ${
      ms(f.playersRestoreMaxMs)
    } | ${f.affected} | ${f.lost} | ${f.bots.resumed} / ${f.bots.closed} | ${f.bots.undone} (${f.bots.maxDrop}) | ${f.bots.unreflected} (${f.bots.maxUnreflected}) | ${f.bots.answered} |`
  );
  const worstPlayer = Math.max(0, ...r.faults.map((f) => f.playersRestoreMaxMs ?? 0));
  const maxDrop = Math.max(0, ...r.faults.map((f) => f.bots.maxDrop));
  const maxLost = Math.max(0, ...r.faults.map((f) => f.bots.maxUnreflected));
  return `Separate \`main.ts\` processes on this machine: a cellappmgr, ${o.cellapps} cellapps, ${o.baseapps} baseapps
(\`--autosave=1\`); one ${o.side} m x ${o.side} m space in ${o.cells} cells with ${o.npcs} NPCs, ${o.bots} bots (SDK
clients in the benchmark's process, resuming by themselves) raising their counters every ${o.raiseEvery} s. Faults
start ${o.warmup} s after the scene is up and are spread over ${o.seconds} s (seed ${o.seed}); a killed process is
started again ${o.restartAfterMs} ms later on its ports and database (${
    o.db ? "the baseapps share one PostgreSQL database" : "the baseapps share one Deno KV file"
  }), a stopped cellapp is continued after
${o.stopSeconds} s. Detection: the fault to the cellappmgr's /api/cluster no longer listing the process (cellappmgr:
to its admin API answering again with every member back). Restore: from detection to the entity real again on a
live cellapp (cellapps), or to the bot resumed (baseapp); the admin API is polled every ${o.pollMs} ms, which bounds
the resolution. Confirmed then undone: a bot's own counter seen lower than it saw before, summed (the largest drop
of one bot): a raise it saw confirmed, taken back by a restore. Raises lost: raises a bot sent that its counter never
showed, summed (the most of one bot); these include those answered with an error (next column: no cell entity while
it is restored, or a call lost with its cellapp), and raises sent while its connection was down.

| at | fault | process | detection ms | restore p50 / p99 / max ms | players max ms | entities (bots) on it | lost | bots resumed / gone | confirmed then undone (max) | raises lost (max) | raises answered with an error |
| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
${rows.join("\n")}

| total | value | aim |
| --- | ---: | --- |
| entities lost (real at the start, not at the end) | ${r.lost.length} | 0 |
| entities doubled (real on two cellapps in two polls in a row) | ${r.doubled.length} | 0 |
| slowest player restore after detection | ${worstPlayer} ms | within 3,000 ms |
| bots connected at the end | ${r.botsConnectedAtEnd} / ${r.botsStarted} | all |
| confirmed then undone (largest counter drop one bot saw) | ${maxDrop} | 0 |
| most raises one bot lost in one fault | ${maxLost} | one backup period: ${
    Math.ceil(1 / o.raiseEvery)
  } (+1 in flight) |
| raises refused while a bot's connection was down | ${r.raiseErrors} | |
| run time | ${r.seconds} s | |`;
}
