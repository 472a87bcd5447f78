/**
 * `deno task bench seamless_scenario`: the scenario of docs/benchmarks.md ("Seamless scenario") on a local cluster.
 * 200 bots and 2,000 NPCs in a 4-cell space over 2 cellapps walk across the
 * borders for 60 s; the bots report what their clients saw (out of order,
 * gaps, leaves of entities still in range), and once they have logged out the
 * reals across all cells must equal the NPCs created: none lost, none doubled.
 */
import { parseArgs } from "node:util";
import { json, startBenchCluster } from "./lib/cluster.ts";
import { runBots } from "../client/bots/mod.ts";
import type { CellEntityView, SpaceView } from "../core/views.ts";
import { registry } from "../entities/mod.ts";
import { writeResults } from "./results.ts";

const AOI = 60;

/** Runs the scenario and writes its section of bench/RESULTS.md. */
export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      bots: { type: "string", default: "200" },
      npcs: { type: "string", default: "2000" },
      cells: { type: "string", default: "4" },
      seconds: { type: "string", default: "60" },
      warmup: { type: "string", default: "5" },
      side: { type: "string", default: "600" },
    },
  });
  const bots = Number(values.bots), npcs = Number(values.npcs), cells = Number(values.cells);
  const seconds = Number(values.seconds), warmup = Number(values.warmup), side = Number(values.side);
  const dir = await Deno.makeTempDir({ prefix: "bench-seamless-" });
  const cluster = await startBenchCluster(
    [
      `--kv=${dir}/db.kv`,
      "--npcs=0",
      "--cellapps=2",
      `--aoi-radius=${AOI}`,
      `--ghost-radius=${AOI + 20}`,
      "--log-level=warn",
      // Every bot logs in from this one host.
      "--login-rate=1000",
      // The bots enter the scenario's space, each where it asks to be.
      "--client-spawn",
    ],
    { cellapps: 2, baseapp: true },
  );
  const admin = cluster.admin;
  try {
    const { id } = await json<{ id: number }>(`${admin}/api/spaces`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        bounds: [0, 0, side, side],
        cells,
        entities: [{ type: "NPC", count: npcs, props: { wanderRadius: side / 3 } }],
      }),
    });
    const report = await runBots({
      admin,
      count: bots,
      duration: seconds,
      warmup,
      space: id,
      registry,
      aoiRadius: AOI,
      log: (l) => console.error(`scenario: ${l}`),
    });
    // The bots logged out: what is left are the NPCs, every one real exactly once.
    const count = async () => {
      const space = await json<SpaceView>(`${admin}/api/spaces/${id}`);
      const ids: number[] = [];
      const apps = [...new Set(space.cells.map((c) => c.cellapp))];
      for (const a of apps) {
        const body = await json<{ entities: CellEntityView[] }>(`${admin}/api/cellapps/${a}/cells/${id}`);
        ids.push(...body.entities.filter((e) => e.real && e.type === "NPC").map((e) => e.id));
      }
      return {
        reals: ids.length,
        unique: new Set(ids).size,
        offloads: space.cells.reduce((n, c) => n + c.offloadsIn, 0),
      };
    };
    let settled = await count();
    for (let i = 0; i < 50 && (settled.reals !== npcs || settled.unique !== npcs); i++) {
      await new Promise((r) => setTimeout(r, 200));
      settled = await count();
    }
    const md =
      `A local cluster (\`deno task start\` with 2 cellapps); one space of ${side} m x ${side} m in ${cells} cells,
${npcs} NPCs wandering up to ${Math.round(side / 3)} m from home, ${bots} bots of \`deno task bots\` walking in it at
5 m/s for ${report.seconds} s after ${warmup} s of warm-up (AoI radius ${AOI} m, ghost radius ${AOI + 20} m).

| figure | value |
| --- | ---: |
| bots connected | ${report.connected} / ${report.clients} |
| out of order / gaps / errors | ${report.outOfOrder} / ${report.gaps} / ${report.errors} |
| leaves of entities still well inside the AoI | ${report.leftInRange} |
| enters / leaves | ${report.enters} / ${report.leaves} |
| bytes per client per second | ${report.bytesPerClientPerSec} |
| move seen by another bot, p50 / p99 | ${report.latencyP50Ms} / ${report.latencyP99Ms} ms |
| offloads during the run | ${settled.offloads} |
| NPCs real after the bots left (created ${npcs}) | ${settled.reals}, ${settled.unique} distinct |`;
    console.log(md);
    console.log(
      JSON.stringify({ ...report, npcsReal: settled.reals, npcsDistinct: settled.unique, offloads: settled.offloads }),
    );
    await writeResults("seamless scenario", md);
  } finally {
    await cluster.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
