/**
 * `deno task bench nav`: navigation (cell/nav/) on the test OBJ (tests/fixtures/nav/wall.obj, a 200 × 100 m floor with a
 * wall across it and a block): the time to build its navmesh, path queries and raycasts per second between random
 * points on the floor, and the navigate controller's cost per walker per tick in one cell, against moveToPoint and
 * against standing still. A few seconds in all; writes its section of bench/RESULTS.md (`--dry`: print only).
 */
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { createRegistry, defineEntity } from "../core/def/mod.ts";
import { CellScript, type Vec3 } from "../core/script.ts";
import { NavMeshes } from "../cell/nav/mod.ts";
import type { Entity } from "../cell/entity.ts";
import type { Cell } from "../cell/cell.ts";
import { loneCell } from "../testing/lone_cell.ts";
import { memoryLogger } from "../testing/log.ts";
import { writeResults } from "./results.ts";

const WALL_OBJ = fileURLToPath(new URL("../tests/fixtures/nav/wall.obj", import.meta.url));
const Walker = defineEntity({ name: "Walker", hasCell: true, properties: {} });
const registry = createRegistry({ entities: [Walker] });
const DT = 100, WARMUP = 5, SPEED = 5;

let seed = 12345;
const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;

/** A random point on the floor, off the wall (x 78..82, z 0..70) and the block (x 150..160, z 80..90). */
function floorPoint(): Vec3 {
  for (;;) {
    const x = 2 + rnd() * 196, z = 2 + rnd() * 96;
    const nearWall = x > 76 && x < 84 && z < 72, nearBlock = x > 148 && x < 162 && z > 78 && z < 92;
    if (!nearWall && !nearBlock) return { x, y: 0, z };
  }
}

type Mode = "navigate" | "moveToPoint" | "idle";

/** Walks to a random point, and on arrival to the next: by navigate or moveToPoint, as `mode` says. */
function walkerScript(mode: Mode, arrivals: { n: number }) {
  return class extends CellScript {
    go(): void {
      if (mode === "navigate") this.self.navigate(floorPoint(), SPEED);
      else if (mode === "moveToPoint") this.self.moveToPoint(floorPoint(), SPEED);
    }
    override onMove(): void {
      arrivals.n++;
      this.go();
    }
  };
}

/** One cell of `n` walkers in `mode`, warmed up, and the arrivals counted from now on. */
function walkers(meshes: NavMeshes, mode: Mode, n: number): { cell: Cell; arrivals: { n: number }; ms: number } {
  const arrivals = { n: 0 };
  const { cell } = loneCell({
    registry,
    scripts: { Walker: walkerScript(mode, arrivals) },
    bounds: [0, 0, 200, 100],
    spaceId: 2,
    navGeometry: WALL_OBJ,
    navMeshes: meshes,
    log: memoryLogger(),
  });
  for (let i = 0; i < n; i++) {
    const e = cell.createEntity("Walker", floorPoint()) as Entity;
    (e.script as unknown as { go(): void }).go();
  }
  for (let t = 0; t < WARMUP; t++) cell.tick(DT);
  arrivals.n = 0;
  return { cell, arrivals, ms: 0 };
}

/**
 * Milliseconds per tick of a cell of `n` walkers in each mode, and their arrivals: the three cells take turns, a few
 * ticks each, so that they share whatever else the machine is doing.
 */
function tickCosts(meshes: NavMeshes, n: number, ticks: number): Record<Mode, { msPerTick: number; arrivals: number }> {
  const modes: Mode[] = ["idle", "moveToPoint", "navigate"];
  const runs = modes.map((m) => walkers(meshes, m, n));
  const turn = 4;
  for (let done = 0; done < ticks; done += turn) {
    for (const r of runs) {
      const t0 = performance.now();
      for (let t = 0; t < turn; t++) r.cell.tick(DT);
      r.ms += performance.now() - t0;
    }
  }
  const ticked = Math.ceil(ticks / turn) * turn;
  const out = {} as Record<Mode, { msPerTick: number; arrivals: number }>;
  modes.forEach((m, i) => (out[m] = { msPerTick: runs[i].ms / ticked, arrivals: runs[i].arrivals.n }));
  return out;
}

/** Runs the benchmark and writes its section of bench/RESULTS.md. */
export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      walkers: { type: "string", default: "2000" },
      ticks: { type: "string", default: "40" },
      seconds: { type: "string", default: "1" },
      dry: { type: "boolean", default: false },
    },
  });
  const count = Number(values.walkers), ticks = Number(values.ticks), seconds = Number(values.seconds);
  const meshes = new NavMeshes();
  const b0 = performance.now();
  const mesh = await meshes.load(WALL_OBJ);
  const buildMs = performance.now() - b0;

  const pairs = Array.from({ length: 1000 }, () => [floorPoint(), floorPoint()] as const);
  let paths = 0, found = 0, corners = 0;
  const p0 = performance.now();
  while (performance.now() - p0 < seconds * 1000) {
    const [a, b] = pairs[paths++ % pairs.length];
    const r = mesh.findPath(a, b);
    if ("path" in r) {
      found++;
      corners += r.path.length;
    }
  }
  const pathRate = paths / ((performance.now() - p0) / 1000);
  let rays = 0, hits = 0;
  const r0 = performance.now();
  while (performance.now() - r0 < (seconds * 1000) / 2) {
    const [a, b] = pairs[rays++ % pairs.length];
    if (mesh.raycast(a, b)) hits++;
  }
  const rayRate = rays / ((performance.now() - r0) / 1000);

  const { idle, moveToPoint: straight, navigate: nav } = tickCosts(meshes, count, ticks);
  const perWalker = (ms: number) => ((ms - idle.msPerTick) / count) * 1000;
  const f = (v: number, d = 0) => v.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });

  const md = `
The test OBJ (\`tests/fixtures/nav/wall.obj\`: a 200 × 100 m floor, a 4 × 70 m wall across it, a 10 × 10 m block),
built into a navmesh with Recast (npm:@recast-navigation 0.43.1, WebAssembly; 0.25 m voxels, a walker 0.5 m wide) in
${f(buildMs)} ms in a worker thread, as a cellapp builds it (the worker's start and Recast's initialisation included). Queries between ${pairs.length} random pairs of floor points (off the wall and the block), one after
another on one thread for ${seconds} s (raycasts ${seconds / 2} s). Other work shares this machine: figures from
run to run differ by up to 3×.

| query | per second | notes |
| ----- | ---------: | ----- |
| findPath (Detour: nearest polygons, A*, straight path) | ${f(pathRate)} | ${f((found / paths) * 100)} % found, ${
    f(corners / Math.max(found, 1), 1)
  } corners on average |
| raycast along the mesh | ${f(rayRate)} | ${f((hits / rays) * 100)} % stopped by a wall or the mesh's edge |

Controllers: one cell of ${f(count)} walkers at ${SPEED} m/s, each walking to a random floor point and on arrival to
the next; ${ticks} ticks of ${DT} ms after ${WARMUP} untimed, the three cells taking turns of 4 ticks. The cost per walker is the tick time less that of the same
cell with every walker standing still, divided by the walkers; navigate's includes the path query of each new walk.

| walkers | ms per tick | µs per walker per tick | arrivals (new walks) |
| ------- | ----------: | ---------------------: | -------------------: |
| standing still | ${f(idle.msPerTick, 2)} | — | — |
| moveToPoint (straight, through walls) | ${f(straight.msPerTick, 2)} | ${f(perWalker(straight.msPerTick), 2)} | ${
    f(straight.arrivals)
  } |
| navigate (along the navmesh) | ${f(nav.msPerTick, 2)} | ${f(perWalker(nav.msPerTick), 2)} | ${f(nav.arrivals)} |
`;
  console.log(md);
  if (!values.dry) await writeResults("nav", md);
  meshes.clear();
}
