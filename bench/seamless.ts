/**
 * `deno task bench seamless`: a space over two cellapps on loopback whose
 * NPCs keep walking across the border. Measures offloads per second and the
 * ghost traffic between the cellapps per ghost per second; then, in process,
 * the bytes a client receives because its entity changed cell (handover.ts).
 */
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { parseReady, splitLines } from "../cli/local_cluster.ts";
import type { ClusterView, SpaceView } from "../core/views.ts";
import { writeResults } from "./results.ts";
import { measureHandovers } from "./handover.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

async function json<T>(url: string, init?: RequestInit): Promise<T> {
  const res = await fetch(url, init);
  const body = await res.json();
  if (!res.ok) throw new Error(`${init?.method ?? "GET"} ${url}: ${res.status} ${JSON.stringify(body)}`);
  return body as T;
}

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
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--config",
      `${ROOT}deno.json`,
      `${ROOT}main.ts`,
      "--port=0",
      "--admin-port=0",
      "--kv=:memory:",
      "--npcs=0",
      "--baseapps=0",
      "--aoi-radius=30",
      "--ghost-radius=45",
      "--log-level=warn",
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  try {
    const lines = child.stdout.pipeThrough(new TextDecoderStream()).pipeThrough(splitLines()).getReader();
    let admin = "";
    while (!admin) {
      const { value, done } = await lines.read();
      if (done) throw new Error("the local cluster exited before it was ready");
      admin = parseReady(value)?.admin ?? "";
    }
    (async () => {
      while (!(await lines.read()).done) { /* drain */ }
    })().catch(() => {});
    for (let i = 0; i < 100; i++) {
      const c = await json<ClusterView>(`${admin}/api/cluster`);
      if (c.processes.filter((p) => p.role === "cellapp").length === 2) break;
      await new Promise((r) => setTimeout(r, 100));
    }
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
    await fetch(`${admin}/api/shutdown`, { method: "POST" });
    await child.status;
  } finally {
    try {
      child.kill("SIGKILL");
    } catch {
      // already exited
    }
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
