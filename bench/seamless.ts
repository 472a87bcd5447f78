/**
 * `deno task bench seamless`: a space over two cellapps on loopback whose
 * NPCs keep walking across the border. Measures offloads per second and the
 * ghost traffic between the cellapps per ghost per second; then, in process,
 * the bytes a client receives because its entity changed cell (handover.ts).
 */
import { parseArgs } from "node:util";
import { json, startBenchCluster } from "./lib/cluster.ts";
import type { ClusterView, SpaceView } from "../core/views.ts";
import { writeResults } from "./results.ts";
import { measureHandovers } from "./handover.ts";

/** Runs the benchmark and writes its section of bench/RESULTS.md. */
export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      npcs: { type: "string", default: "500" },
      seconds: { type: "string", default: "15" },
      warmup: { type: "string", default: "5" },
    },
  });
  const npcs = Number(values.npcs), seconds = Number(values.seconds), warmup = Number(values.warmup);
  const ho = await measureHandovers();
  const cluster = await startBenchCluster(
    ["--kv=:memory:", "--npcs=0", "--baseapps=0", "--aoi-radius=30", "--ghost-radius=45", "--log-level=warn"],
    { cellapps: 2, baseapp: false },
  );
  const admin = cluster.admin;
  try {
    const { id } = await json<{ id: number }>(`${admin}/api/spaces`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        bounds: [0, 0, 100, 100],
        cells: 2,
        entities: [{ type: "NPC", count: npcs, props: { wanderRadius: 150 } }],
      }),
    });
    const sample = async () => {
      const space = await json<SpaceView>(`${admin}/api/spaces/${id}`);
      const cluster = await json<ClusterView>(`${admin}/api/cluster`);
      const cellapps = cluster.processes.filter((p) => p.role === "cellapp");
      return {
        at: performance.now(),
        offloads: space.cells.reduce((n, c) => n + c.offloadsIn, 0),
        ghosts: space.cells.reduce((n, c) => n + c.ghosts, 0),
        reals: space.cells.reduce((n, c) => n + c.reals, 0),
        bytes: cellapps.reduce((n, p) => n + (p.peerBytesOut ?? 0), 0),
        tickP50: Math.max(...space.cells.map((c) => c.tickMsP50)),
        tickP99: Math.max(...space.cells.map((c) => c.tickMsP99)),
      };
    };
    await new Promise((r) => setTimeout(r, warmup * 1000));
    const first = await sample();
    const ghostCounts: number[] = [];
    const until = first.at + seconds * 1000;
    let last = first;
    while (performance.now() < until) {
      await new Promise((r) => setTimeout(r, 1000));
      last = await sample();
      ghostCounts.push(last.ghosts);
    }
    const s = (last.at - first.at) / 1000;
    const offloadsPerSec = (last.offloads - first.offloads) / s;
    const avgGhosts = ghostCounts.reduce((a, b) => a + b, 0) / ghostCounts.length;
    const bytesPerSec = (last.bytes - first.bytes) / s;
    const perGhost = bytesPerSec / Math.max(1, avgGhosts);
    const md = `A local cluster of two cellapps on loopback; one space of 100 m x 100 m split in two cells, ${npcs} NPCs
walking to random points up to 150 m from their homes at 1-2 m/s, so many cross the border all the time
(AoI radius 30 m, ghost radius 45 m, offload hysteresis 10 m). Measured for ${
      s.toFixed(1)
    } s after ${warmup} s of warm-up,
from the admin API's counters.

| figure | value |
| --- | ---: |
| offloads per second (both directions) | ${offloadsPerSec.toFixed(1)} |
| ghosts (mean over the run) | ${avgGhosts.toFixed(0)} |
| traffic between the cellapps, bytes per second | ${Math.round(bytesPerSec).toLocaleString("en")} |
| of which per ghost per second (ghost batches, creations and hand-overs together) | ${Math.round(perGhost)} B |
| reals at the end (created: ${npcs}) | ${last.reals} |
| worst cell's tick p50 / p99 | ${last.tickP50} / ${last.tickP99} ms |

${handoverSection(ho)}`;
    console.log(md);
    await writeResults("seamless", md);
  } finally {
    await cluster.stop();
  }
}

function handoverSection(f: Awaited<ReturnType<typeof measureHandovers>>): string {
  const extra = f.handOverTickBytes - f.ordinaryTickBytes;
  return `The extra bytes a client receives because its entity changed cell, in process (two cells linked in memory,
${f.players} players with witnesses walking 1.5 m per tick back and forth across the border among ${f.npcs} wandering NPCs,
AoI 30 m, ${f.ticks} ticks, every frame decoded by a client world): a player's bytes in the two ticks of each
hand-over (the tick it offloads, from the old cell, and the next, from the new one) against its other ticks.

| figure | value |
| --- | ---: |
| hand-overs | ${f.handOvers} |
| bytes per player per tick, hand-over ticks | ${f.handOverTickBytes.toFixed(1)} |
| bytes per player per tick, other ticks | ${f.ordinaryTickBytes.toFixed(1)} |
| extra bytes per hand-over tick (aim: none beyond the normal updates) | ${extra > 0 ? extra.toFixed(1) : "none"} |
| entities that left and re-entered a client's view during a hand-over | ${f.reEnters} |`;
}
