/**
 * The cellappmgr's Balancer at the default AoI: cellapps report a ghost radius
 * (520 m) wider than the cells of a 1 km space of 4 cells, and a crowd in one
 * cell still pulls the partitions into it, making cells narrower than the
 * ghost radius, until the cells carry the same load.
 */
import assert from "node:assert/strict";
import { type BspNode, buildBsp } from "../../core/geo/mod.ts";
import type { Rect } from "../../core/geo/mod.ts";
import { createLogger } from "../../core/log.ts";
import type { CellReport } from "../../core/wire/mod.ts";
import { Balancer, type CellLoad, DEFAULT_MIN_CELL_WIDTH } from "../../mgr/balance/mod.ts";
import type { Member } from "../../mgr/registry.ts";
import { Space } from "../../mgr/space.ts";
import { crowd, type Entity, measure, narrowest, rng, uniform } from "./balance_world.ts";

const bounds: Rect = { minX: 0, minZ: 0, maxX: 1000, maxZ: 1000 };
const GHOST_RADIUS = 520;

/** The world of the issue's run: most of the load in a crowd in cell 1's quadrant, a little spread everywhere. */
function world(): Entity[] {
  const random = rng(7);
  return [...crowd(random, bounds, 250, 250, 60, 600, 0.001), ...uniform(random, bounds, 30, 0.001)];
}

/** Runs the Balancer over one space for `periods` periods; returns each period's cell loads and tree. */
async function run(minWidth: number, periods: number): Promise<{ tree: BspNode; loads: Map<number, CellLoad> }[]> {
  const space = new Space(2, bounds, buildBsp(bounds, [10, 11, 12, 13]), false, null);
  space.minCells = 4;
  const entities = world();
  let loads = measure(space.tree, entities);
  const cellapps = [10, 11, 12, 13].map((id) => ({ id, load: 0.3, ghostRadius: GHOST_RADIUS }) as Member);
  const balancer = new Balancer(
    {
      spaces: () => [space],
      report: (_s, cellId) => {
        const l = loads.get(cellId);
        return l &&
          ({ cellId, reals: l.reals, load: l.load, entityLoad: l.load, entityBounds: l.bounds } as CellReport);
      },
      cellapps: () => cellapps,
      setTree: (s, tree) => {
        s.tree = tree;
        return Promise.resolve();
      },
    },
    new Set(),
    { periodMs: 1000, minWidth, log: createLogger("balancer", "warn") },
  );
  const out = [];
  for (let i = 0; i < periods; i++) {
    loads = measure(space.tree, entities);
    out.push({ tree: space.tree, loads });
    balancer.step();
    // setTree's promise settles, and with it the space's busy flag.
    await new Promise((r) => setTimeout(r, 0));
  }
  return out;
}

/** The highest cell load over the mean. */
function ratio(loads: Map<number, CellLoad>): number {
  const ls = [...loads.values()].map((l) => l.load);
  return Math.max(...ls) / (ls.reduce((s, l) => s + l, 0) / ls.length);
}

Deno.test("at the default AoI a crowd in one cell makes cells narrower than the ghost radius, and they even out", async () => {
  const history = await run(DEFAULT_MIN_CELL_WIDTH, 60);
  assert.ok(ratio(history[0].loads) > 3, `the crowd starts in one cell: ${ratio(history[0].loads).toFixed(2)}`);
  const last = history.at(-1)!;
  const widths = [...narrowest(last.tree, bounds).values()];
  assert.ok(
    widths.some((w) => w < GHOST_RADIUS),
    `a cell is narrower than the ghost radius: ${widths.map((w) => w.toFixed(0)).join(", ")}`,
  );
  assert.ok(widths.every((w) => w >= DEFAULT_MIN_CELL_WIDTH - 1e-9), `no cell below the minimum: ${widths}`);
  // Sample by sample: once even, the busiest cell stays within 15 % of the mean.
  const first = history.findIndex((p) => ratio(p.loads) <= 1.15);
  assert.ok(first >= 0 && first <= 40, `within 15 % after ${first} periods`);
  const after = history.slice(first).map((p) => ratio(p.loads));
  assert.ok(after.every((r) => r <= 1.3), `after evening out: ${after.map((r) => r.toFixed(2)).join(", ")}`);
  assert.ok(ratio(last.loads) <= 1.15, `at the end: ${ratio(last.loads).toFixed(2)}`);
});

Deno.test("with the ghost radius as the floor (the old rule) the same crowd stays in one cell", async () => {
  const history = await run(GHOST_RADIUS, 30);
  assert.ok(ratio(history.at(-1)!.loads) > 3, `still uneven: ${ratio(history.at(-1)!.loads).toFixed(2)}`);
});
