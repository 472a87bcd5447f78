/**
 * `deno task bench balance [--quick] [--npcs=N] [--bots=N] [--loopback]`: load balancing of a crowd. A 2 km space in 4
 * cells over 4 cellapps, each process on a test host of its own (a network namespace; --loopback, or where namespaces
 * cannot be made, all on this host); a crowd of NPCs forms in one quadrant, stays, then walks to the next quadrant and gathers there. Each
 * scene runs with balancing on and then off, at the default AoI and at 100 m (--quick: 100 m only, shorter phases).
 * Judged sample by sample: the busiest cellapp's load over the mean, once a second, and how soon after the crowd
 * formed it came within 15 % (the aim: within 60 s). Also: cells added and retired, Marchers lost or doubled, and
 * whether bots standing in the crowd saw any Marcher's beat skip or go back.
 */
import { parseArgs } from "node:util";
import { figure, giveUpAfter, numberFlag } from "./lib/run.ts";
import { type PhaseResult, runScene, type SceneOptions, type SceneResult } from "./lib/balance_scene.ts";
import { hostsPlacement, loopbackPlacement, type Placement } from "./lib/placement.ts";
import { hostsUnavailable } from "../testing/hosts.ts";
import { writeResults } from "./results.ts";

/** Runs the benchmark and writes its section of bench/RESULTS.md. */
export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      quick: { type: "boolean", default: false },
      npcs: { type: "string", default: "2000" },
      bots: { type: "string", default: "4" },
      loopback: { type: "boolean", default: false },
    },
  });
  const quick = values.quick;
  const npcs = numberFlag("npcs", values.npcs, 10, 10_000);
  const bots = numberFlag("bots", values.bots, 0, 50);
  const noHosts = values.loopback ? "--loopback" : await hostsUnavailable();
  if (noHosts) console.error(`balance bench: every process on loopback (${noHosts})`);
  const placement = (): Promise<Placement> =>
    noHosts
      ? Promise.resolve(loopbackPlacement())
      : hostsPlacement({ cellappmgr: 1, cellapp: 4, baseapp: bots > 0 ? 1 : 0 });
  let where = "";
  const aois: (number | null)[] = quick ? [100] : [null, 100];
  const scenes: SceneOptions[] = aois.flatMap((aoi) => [
    { aoi, balance: true, npcs, bots, firstS: quick ? 30 : 60, secondS: quick ? 30 : 60 },
    { aoi, balance: false, npcs, bots, firstS: quick ? 10 : 20, secondS: quick ? 10 : 20 },
  ]);
  const pids: number[] = [];
  const done = giveUpAfter("balance", (quick ? 6 : 15) * 60_000, () => pids);
  const results: SceneResult[] = [];
  try {
    for (const s of scenes) {
      console.error(`balance bench: AoI ${s.aoi ?? "default"}, balancing ${s.balance ? "on" : "off"}…`);
      await using place = await placement();
      where = place.label;
      results.push(await runScene(s, place, pids));
    }
  } finally {
    done();
  }
  const md = report(results, quick, where);
  console.log(md);
  await writeResults("balance", md);
}

function report(results: SceneResult[], quick: boolean, where: string): string {
  const o = results[0].options;
  const rows = results.flatMap((r) => [row(r, "first", r.first), row(r, "second", r.second)]);
  const verdicts = results.filter((r) => r.options.balance).flatMap((r) =>
    (["first", "second"] as const).map((p) => {
      const f = r[p];
      const met = f.within15 !== null && f.within15 <= 60 && f.heldShare >= 0.9;
      return `- AoI ${aoiLabel(r)}, crowd in its ${p} place: ${met ? "met" : "not met"} (within 15 % after ${
        f.within15 === null ? "never, in the window" : `${figure(f.within15)} s`
      }, then ${figure(f.heldShare * 100)} % of samples within)`;
    })
  );
  const bots = results.map((r) =>
    `AoI ${aoiLabel(r)}, balancing ${r.options.balance ? "on" : "off"}: ${r.bots.connected} bots, ${
      figure(r.bots.beats)
    } beats seen, ${r.bots.gaps} gaps, ${r.bots.reorders} reorders${
      r.bots.errors.length ? ` (${r.bots.errors.slice(0, 3).join("; ")})` : ""
    }`
  );
  return `${quick ? "A quick run (--quick): AoI 100 m only, shorter phases. " : ""}A 2 km × 2 km space in 4 cells
(quadrants) over 4 cellapps, ${where}. ${o.npcs} Marchers (bench/lib/crowd_game.ts) appear at the middle of one quadrant, spread to
within 250 m of it walking at 10 m/s, stay for the first phase, then go at 50 m/s to within 250 m of the middle of
the next quadrant and walk about there. Once a second the cellapps' loads (their share of the tick budget, as the
cellappmgr is told them) are read; the busiest over the mean is judged sample by sample. "Within 15 %" is the
first sample at or under 1.15, in seconds from the crowd forming (its spawn; in the second place, when its last
member can have arrived); "held" is the share of the samples from then to the phase's end also within 15 %. The
aim is met when that first sample comes within 60 s and at least 90 % of the later samples hold. The CPU column
is the same ratio on /proc CPU over the phase's last 20 s. Balancing off runs the same scene with shorter
phases. Bots stand in each place and check that every Marcher's once-a-second beat never skips while in view or
goes back.

| AoI (ghost radius) | balancing | crowd | at first | within 15 % after | held | last 20 s: median / worst | mean load, last 20 s | CPU ratio, last 20 s | narrowest cell | cells added / retired | lost / doubled (2 polls) / doubled at end |
|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|
${rows.join("\n")}

${verdicts.join("\n")}

Bots: ${bots.join("; ")}.

Entities listed real on two cellapps in two polls in a row (5 s apart): ${
    results.map((r) =>
      `AoI ${aoiLabel(r)}, balancing ${r.options.balance ? "on" : "off"}: ${
        r.doubledSeen.length ? r.doubledSeen.slice(0, 3).join("; ") : "none"
      }`
    ).join("; ")
  }.

Cells are added only while the space's cellapps are loaded above --busy-load (0.8 of a core by default)
and a cellapp that runs none of the space's cells is below 0.5: with 4 cells on 4 cellapps there is none, so
this scene adds and retires no cell; the cluster test balance_test.ts runs that path (thresholds lowered).`;
}

function aoiLabel(r: SceneResult): string {
  return r.options.aoi === null ? "default" : `${r.options.aoi} m`;
}

function row(r: SceneResult, phase: "first" | "second", f: PhaseResult): string {
  return `| ${aoiLabel(r)} (${r.ghostRadius} m) | ${
    r.options.balance ? "on" : "off"
  } | ${phase} place (${f.seconds} s) | ${figure(f.startRatio, 2)} | ${
    f.within15 === null ? "never" : `${figure(f.within15)} s`
  } | ${figure(f.heldShare * 100)} % | ${figure(f.lastMedian, 2)} / ${figure(f.lastWorst, 2)} | ${
    figure(f.lastMeanLoad, 3)
  } | ${figure(f.cpuRatio, 2)} | ${figure(f.narrowest)} m | ${
    phase === "first" ? `${r.cellsAdded} / ${r.cellsRetired}` : ""
  } | ${phase === "first" ? `${r.lost} / ${r.doubled}` : ""} |`;
}
