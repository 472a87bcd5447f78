/**
 * Cells narrower than the ghost radius whose partitions move while a crowd walks through them (in memory: five
 * cells in a row on three "cellapps", the balancer's moves replayed from a seed): every entity is real exactly once,
 * every ghost is one its real keeps in step (it follows the real, and goes once out of range), and no offload is
 * refused for a ghost the target cell does not hold.
 */
import assert from "node:assert/strict";
import { createRegistry, defineEntity, T } from "../../core/def/mod.ts";
import type { BspNode } from "../../core/geo/bsp.ts";
import { seededRandom } from "../../core/random.ts";
import type { Cell } from "../../cell/cell.ts";
import type { Entity } from "../../cell/entity.ts";
import { cellsOf } from "../helpers/two_cells.ts";

const Marcher = defineEntity({
  name: "Marcher",
  hasCell: true,
  volatile: { position: true },
  properties: { step: { type: T.UINT32, flags: "CELL_PUBLIC" } },
});
const registry = createRegistry({ entities: [Marcher] });

const GHOST = 40;
const WIDTH = 400;

/** Five cells in a row, split at `at` (increasing), on cellapps 1, 2, 3, 1, 2. */
function row(at: number[]): BspNode {
  const leaf = (i: number): BspNode => ({ cell: { id: i + 1, cellapp: (i % 3) + 1 } });
  const build = (from: number, to: number): BspNode => {
    if (from === to) return leaf(from);
    const mid = Math.floor((from + to) / 2);
    return { axis: "x", at: at[mid], left: build(from, mid), right: build(mid + 1, to) };
  };
  return build(0, at.length);
}

/** The real copies of entity `id`, but for one being handed over (its new real may already be). */
function realsOf(cells: readonly Cell[], id: number): Entity[] {
  return cells.map((c) => c.entities.get(id)).filter((e): e is Entity => e !== undefined && !e.offloading);
}

async function run(seed: number, chaos: boolean): Promise<string[]> {
  const rng = seededRandom(seed);
  let at = [120, 150, 190, 260];
  const h = cellsOf(
    { registry, cfg: { ghostRadius: GHOST, checkMs: 100, minLifetimeMs: 300 }, chaos: chaos ? { seed } : undefined },
    [0, 0, WIDTH, 100],
    row(at),
  );
  const walkers: { id: number; vx: number }[] = [];
  for (let i = 0; i < 60; i++) {
    const x = 5 + rng() * (WIDTH - 10);
    const cell = h.cells.find((c) => x >= c.rect.minX && x < c.rect.maxX)!;
    const e = cell.createEntity("Marcher", { x, y: 0, z: 5 + rng() * 90 });
    walkers.push({ id: e.id, vx: (rng() < 0.5 ? -1 : 1) * (0.5 + rng() * 1.5) });
  }
  const problems: string[] = [];
  /** Ticks each ghost has been away from its real, by "cell/id". */
  const astray = new Map<string, number>();
  for (let tick = 0; tick < 1200; tick++) {
    // The balancer: every few ticks a partition moves, cells often ending narrower than the ghost radius.
    if (tick % 7 === 0) {
      const i = Math.floor(rng() * at.length);
      const lo = i === 0 ? 5 : at[i - 1] + 5, hi = i === at.length - 1 ? WIDTH - 5 : at[i + 1] - 5;
      at = at.map((v, j) => (j === i ? Math.round(lo + rng() * (hi - lo)) : v));
      h.setTree(row(at));
    }
    for (const w of walkers) {
      const [e] = realsOf(h.cells, w.id);
      if (!e) continue;
      if (e.x + w.vx < 2 || e.x + w.vx > WIDTH - 2) w.vx = -w.vx;
      e.cell.moveEntity(e, e.x + w.vx, 0, e.z);
      (e.props as { step: number }).step++;
    }
    await h.tick(1);
    const TR = Number(Deno.env.get("TRACE_ID") ?? -1);
    if (TR >= 0) {
      for (const l of h.log.lines.splice(0)) console.log("LOG " + l);
      const r = h.cells.map((c) => c.entities.get(TR)).filter((e) => e);
      console.log(`tick ${tick} t=${h.cells[0].time} at=${at} real ${r.map((e) => `${e!.cell.cellId}@${e!.x.toFixed(1)}${e!.offloading ? "(off)" : ""} links=${[...(e!.ghosting?.links.values() ?? [])].map((l) => l.cell + l.state[0])}`)} ghosts ${h.cells.filter((c) => c.ghosts.has(TR)).map((c) => `${c.cellId}@${c.ghosts.get(TR)!.x.toFixed(1)}e${c.ghosts.get(TR)!.ghostInfo!.epoch}`)}`);
    }
    for (const w of walkers) {
      const reals = realsOf(h.cells, w.id);
      const handing = h.cells.some((c) => c.entities.get(w.id)?.offloading);
      if (reals.length > 1 || (reals.length === 0 && !handing)) {
        problems.push(`tick ${tick}: entity ${w.id} is real in cells ${reals.map((e) => e.cell.cellId)}`);
      }
    }
    for (const c of h.cells) {
      for (const g of c.ghosts.values()) {
        const key = `${c.cellId}/${g.id}`;
        const [r] = realsOf(h.cells, g.id);
        const handing = h.cells.find((c) => c.entities.get(g.id)?.offloading);
        const off = !r || Math.abs(r.x - g.x) > 30 || !r.ghosting?.links.has(c.cellId);
        const n = off ? (astray.get(key) ?? 0) + 1 : 0;
        astray.set(key, n);
        if (n === Number(Deno.env.get("ASTRAY") ?? 100)) {
          problems.push(
            `tick ${tick}: cell ${c.cellId} [${c.rect.minX}, ${c.rect.maxX}) holds a ghost of ${g.id} at x = ${
              g.x.toFixed(1)
            } that its real (${r ? `in cell ${r.cell.cellId} at x = ${r.x.toFixed(1)}` : "none"}) ` +
              (r?.ghosting?.links.has(c.cellId) ? "keeps but does not update" : "does not keep"),
          );
        }
      }
    }
  }
  await h.flush();
  for (const l of h.log.lines) if (/holds no ghost|real in space .* here/.test(l)) problems.push(l);
  if (Deno.env.get("NARROW_DEBUG")) console.log(problems.join("\n"));
  return problems;
}

for (const [seed, chaos] of (Deno.env.get("ONLY") ? [[Number(Deno.env.get("ONLY")), true]] : [[1, false], [2, false], [3, true], [4, true], [5, true]]) as const) {
  Deno.test(`narrow cells whose partitions move: reals once, ghosts in step or gone (seed ${seed}${chaos ? ", chaos" : ""})`, async () => {
    const problems = await run(seed, chaos);
    assert.deepEqual(problems.slice(0, 8), [], `${problems.length} problems`);
  });
}
