/**
 * A cell's entity load for the cellappmgr's balancer: the CPU
 * time its reals are charged in the tick (entity_load.ts), by range-list
 * slot; once a second it folds that into each real's smoothed load, sums
 * them, and finds its entity-bound levels (core/wire's EntityBounds) on the
 * range list's sorted X and Z orders.
 */
import { BOUND_LEVELS, type EntityBounds, MAX_LOAD } from "../../core/wire/mod.ts";
import type { RangeEntity, RangeList } from "../range/mod.ts";

/**
 * The least load a real counts for (a share of one core: 10 µs a second),
 * so that a crowd of idle NPCs, whose measured cost is all but nothing, still
 * weighs on where partitions go.
 */
export const ENTITY_LOAD_FLOOR = 1e-5;

/** An entity's load is smoothed exponentially with this time constant (ms). */
export const ENTITY_LOAD_TAU_MS = 3000;

/** Folds closer together than this (ms) keep the previous figures: too short to measure. */
const MIN_FOLD_MS = 200;

/** What the fold needs of a real. */
export interface LoadedEntity extends RangeEntity {
  isReal: boolean;
  /** Smoothed CPU share of one core. */
  cpuLoad: number;
  /** Folds so far, counted up to 2. */
  cpuFolds: number;
}

/** A cell's entity load and where it lies, as its report carries them. */
export interface EntityLoadFigures {
  entityLoad: number;
  entityBounds: EntityBounds;
}

/** The entity load of one cell, folded at most every MIN_FOLD_MS. */
export class CellLoadMeter {
  /** CPU time (ms) charged since the last fold, by the slot of the real's range-list node. */
  #cpu = new Float64Array(64);
  /**
   * Time (ms) charged since the last settle: wall time of the sections, which counts the time the process waited for
   * a core in them. `settle` moves it into #cpu scaled by the CPU share of the tick (docs/architecture.md,
   * "Balancing").
   */
  #charged = new Float64Array(64);
  #lastFold: number;
  #figures: EntityLoadFigures = { entityLoad: 0, entityBounds: emptyBounds() };

  constructor(
    private readonly reals: { values(): Iterable<LoadedEntity> },
    private readonly rangeList: RangeList,
    now: number = performance.now(),
  ) {
    this.#lastFold = now;
  }

  /**
   * The array the CPU time of the real on range-list slot `slot` goes to, grown to hold it (a section open while
   * it grows charges the old array: a sliver of time lost, once per doubling).
   */
  cpuArray(slot: number): Float64Array {
    if (slot >= this.#charged.length) {
      const size = Math.max(slot + 1, this.#charged.length * 2);
      const grown = new Float64Array(size);
      grown.set(this.#charged);
      this.#charged = grown;
      const cpu = new Float64Array(size);
      cpu.set(this.#cpu);
      this.#cpu = cpu;
    }
    return this.#charged;
  }

  /**
   * Takes what was charged since the last settle as CPU time, times `cpuShare`: the process's CPU time over the wall
   * time of the tick that charged it (1 when it had a core throughout; less when it waited for one, which the
   * sections' clock counted as the entities' time).
   */
  settle(cpuShare = 1): void {
    const charged = this.#charged, cpu = this.#cpu, f = cpuShare < 1 ? Math.max(0, cpuShare) : 1;
    for (let i = 0; i < charged.length; i++) {
      const ms = charged[i];
      if (ms !== 0) {
        cpu[i] += ms * f;
        charged[i] = 0;
      }
    }
  }

  /**
   * Forgets what was charged to `e`'s slot: a real new here, whose range-list slot another entity may have had
   * since the last fold.
   */
  clear(e: LoadedEntity): void {
    const slot = e.rangeNode?.idx ?? -1;
    if (slot >= 0 && slot < this.#cpu.length) this.#cpu[slot] = this.#charged[slot] = 0;
  }

  /** The CPU time (ms) `e` was charged since the last fold. */
  cpuMsOf(e: LoadedEntity): number {
    const slot = e.rangeNode?.idx ?? -1;
    return slot >= 0 && slot < this.#cpu.length ? this.#cpu[slot] + this.#charged[slot] : 0;
  }

  /** The figures now: freshly folded when the last fold is old enough, else the last ones. */
  sample(now: number = performance.now()): EntityLoadFigures {
    const dt = now - this.#lastFold;
    if (dt < MIN_FOLD_MS) return this.#figures;
    this.#lastFold = now;
    this.settle();
    const entityLoad = foldLoads(this.reals.values(), (e) => this.cpuMsOf(e), dt);
    // What ghosts and departed reals were charged (a real handed over this second) starts again from nothing.
    this.#cpu.fill(0);
    this.#figures = {
      entityLoad: Math.min(Math.round(entityLoad * 1e6) / 1e6, MAX_LOAD),
      entityBounds: entityBounds(this.rangeList, entityLoad),
    };
    return this.#figures;
  }
}

/**
 * Folds each real's CPU time over the last `dtMs` (`cpuMsOf`) into its smoothed load and
 * returns the cell's entity load: the sum, each real counted at least
 * ENTITY_LOAD_FLOOR. A real new here (made, or handed over from another cell,
 * its load not carried) takes its first figures as they are: the first covers
 * only part of the period, the second a whole one; smoothing starts after.
 */
export function foldLoads(
  reals: Iterable<LoadedEntity>,
  cpuMsOf: (e: LoadedEntity) => number,
  dtMs: number,
): number {
  const alpha = 1 - Math.exp(-dtMs / ENTITY_LOAD_TAU_MS);
  let total = 0;
  for (const e of reals) {
    const share = cpuMsOf(e) / dtMs;
    if (e.cpuFolds < 2) {
      e.cpuLoad = share;
      e.cpuFolds++;
    } else e.cpuLoad += (share - e.cpuLoad) * alpha;
    total += weightOf(e);
  }
  return total;
}

/** What a real weighs in the cell's load and its bounds. */
export function weightOf(e: LoadedEntity): number {
  return e.cpuLoad > ENTITY_LOAD_FLOOR ? e.cpuLoad : ENTITY_LOAD_FLOOR;
}

/**
 * The entity-bound levels of the reals on `list` (ghosts skipped), whose
 * weights sum to `total`: for each edge, walking inward from it, the level
 * BOUND_LEVELS[i] lies halfway between the real at which the weights passed
 * reach that share of `total` and the next real (at that real when none
 * follows), so that the reals beyond it from the edge carry the share.
 */
export function entityBounds(list: RangeList, total: number): EntityBounds {
  if (!(total > 0)) return emptyBounds();
  return {
    minX: levelsFrom(list, true, true, total),
    maxX: levelsFrom(list, true, false, total),
    minZ: levelsFrom(list, false, true, total),
    maxZ: levelsFrom(list, false, false, total),
  };
}

function levelsFrom(list: RangeList, onX: boolean, ascending: boolean, total: number): number[] {
  const n = BOUND_LEVELS.length;
  const out: number[] = new Array(n);
  let acc = 0;
  let reached = 0;
  let waiting = 0;
  let prev = NaN;
  // Rounding in a long sum must not leave the last level just out of reach.
  const slack = 1 - 1e-9;
  list.walkEntities(onX, ascending, (r, key) => {
    const e = r as LoadedEntity;
    if (!e.isReal) return false;
    if (waiting > 0) {
      const at = (prev + key) / 2;
      for (let i = reached - waiting; i < reached; i++) out[i] = at;
      waiting = 0;
      if (reached === n) return true;
    }
    acc += weightOf(e);
    while (reached < n && acc >= BOUND_LEVELS[reached] * total * slack) {
      reached++;
      waiting++;
    }
    prev = key;
    return false;
  });
  if (Number.isNaN(prev)) return [];
  for (let i = reached - waiting; i < n; i++) out[i] = prev;
  return out;
}

function emptyBounds(): EntityBounds {
  return { minX: [], maxX: [], minZ: [], maxZ: [] };
}
