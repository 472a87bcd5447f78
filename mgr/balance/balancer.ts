/**
 * The cellappmgr's load balancer (docs/architecture.md, "Balancing"): once a balance period
 * it feeds each space's latest cell reports to the space's SpaceBalancer,
 * adds a zero-width cell where the space's cellapps are overloaded, retires
 * idle cells and the cells of cellapps being drained, and sends the space's
 * cellapps the tree that results. It keeps each space's last minute of
 * partitions and loads for the admin API.
 */
import { errorText } from "../../core/errors.ts";
import { type BspNode, isCell, removeCell } from "../../core/geo/mod.ts";
import type { Logger } from "../../core/log.ts";
import type { CellReport } from "../../core/wire/mod.ts";
import type { BalanceSampleView, BalanceView, PartitionView } from "../../core/views.ts";
import type { Member } from "../registry.ts";
import type { Space } from "../space.ts";
import { type CellLoad, DEFAULT_BALANCE } from "./types.ts";
import { addCell, type CellPlanOptions, DEFAULT_CELL_PLAN, planAdd, planRetire, readyToLeave } from "./cells.ts";
import { SpaceBalancer } from "./partition.ts";

/** What the balancer needs of the cellappmgr. */
export interface BalanceHost {
  /** Every space (those shutting down included: they are skipped). */
  spaces(): Iterable<Space>;
  /** The latest report of a cell. */
  report(spaceId: number, cellId: number): CellReport | undefined;
  /** The live cellapps. */
  cellapps(): Member[];
  /** Gives `space` a new tree and tells its cellapps (a new cellapp's cell is made first). */
  setTree(space: Space, tree: BspNode): Promise<void>;
}

/** How the balancer runs. */
export interface BalancerOptions {
  /** Balance period (ms); 0 keeps every partition where it is (a retire still drains). */
  periodMs: number;
  /** No cell is made narrower than this (m); the ghost radius is no floor (a narrow cell only has more ghosts). */
  minWidth: number;
  /** When cells are added and retired; the defaults otherwise. */
  plan?: Partial<CellPlanOptions>;
  log: Logger;
}

/** Samples kept per space: a minute at the default period. */
const HISTORY = 60;
/** Periods after a cell was added before another may be: the new one takes load only as it grows. */
const ADD_COOLDOWN = 10;

interface SpaceState {
  balancer: SpaceBalancer;
  enabled: boolean;
  /** Cells chosen to shrink to nothing and leave (idle cells; a drained cellapp's are added to these). */
  retiring: Set<number>;
  history: BalanceSampleView[];
  /** A tree change is being sent. */
  busy: boolean;
  /** Periods to wait before adding another cell. */
  cooldown: number;
}

/** Balances every space of the cluster. */
export class Balancer {
  readonly #host: BalanceHost;
  readonly #opts: BalancerOptions;
  readonly #state = new Map<number, SpaceState>();
  /** Cellapps being drained: they get no new cells, and theirs shrink to nothing (shared with the spaces). */
  readonly draining: Set<number>;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(host: BalanceHost, draining: Set<number>, opts: BalancerOptions) {
    this.#host = host;
    this.draining = draining;
    this.#opts = opts;
  }

  /** Runs a balance step every period (at least once a second, so a drain goes on with balancing switched off). */
  start(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => this.step(), this.#opts.periodMs > 0 ? this.#opts.periodMs : 1000);
  }

  /** Stops the periodic steps. */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Switches balancing of a space on or off. */
  setEnabled(space: Space, enabled: boolean): void {
    this.#stateOf(space).enabled = enabled;
    this.#opts.log.info(`space ${space.id}: balancing switched ${enabled ? "on" : "off"}`);
  }

  /** Starts draining a cellapp; returns how many cells it still runs. */
  drain(cellapp: number): number {
    if (!this.draining.has(cellapp)) {
      this.draining.add(cellapp);
      this.#opts.log.info(`cellapp ${cellapp} is retiring: its cells shrink to nothing and their entities move out`);
    }
    return this.cellsOn(cellapp);
  }

  /** Cells of `cellapp` in every tree. */
  cellsOn(cellapp: number): number {
    let n = 0;
    for (const s of this.#host.spaces()) n += s.cells().filter((c) => c.cellapp === cellapp).length;
    return n;
  }

  /** A cellapp left the cluster: nothing to drain any more. */
  forget(cellapp: number): void {
    this.draining.delete(cellapp);
  }

  /** What GET /api/spaces/:id shows of a space's balance. */
  view(space: Space): BalanceView {
    const st = this.#stateOf(space);
    return {
      enabled: st.enabled,
      periodMs: this.#opts.periodMs,
      retiring: [...this.#retiringOf(space, st)].sort((a, b) => a - b),
      partitions: partitionsOf(space.tree),
      history: st.history,
    };
  }

  /** One balance period over every space. */
  step(): void {
    const now = Date.now();
    const live = new Set<number>();
    for (const space of this.#host.spaces()) {
      live.add(space.id);
      if (space.shuttingDown || space.bare || space.placing) continue;
      const st = this.#stateOf(space);
      const loads = this.#loadsOf(space);
      this.#record(space, st, loads, now);
      if (st.busy) continue;
      const tree = this.#next(space, st, loads);
      if (tree === space.tree) continue;
      st.busy = true;
      this.#host.setTree(space, tree).catch((e) =>
        this.#opts.log.error(`space ${space.id}: sending its new tree failed: ${errorText(e)}`)
      ).finally(() => (st.busy = false));
    }
    for (const id of this.#state.keys()) if (!live.has(id)) this.#state.delete(id);
  }

  /** The space's tree after this period's moves, adds and removals; the same object when nothing changed. */
  #next(space: Space, st: SpaceState, loads: Map<number, CellLoad>): BspNode {
    const balancing = st.enabled && this.#opts.periodMs > 0;
    const cells = space.cells();
    for (const id of st.retiring) if (!cells.some((c) => c.id === id)) st.retiring.delete(id);
    const retiring = this.#retiringOf(space, st);
    // A space whose every cell is retiring first gets a cell on a cellapp that stays.
    if (retiring.size === cells.length) {
      const target = this.#spareCellApp(space);
      if (!target) return space.tree;
      const split = cells.reduce((a, b) => (loadOf(loads, b.id) > loadOf(loads, a.id) ? b : a));
      return this.#withNewCell(space, split.id, target.id);
    }
    if (!balancing && retiring.size === 0) return space.tree;
    let tree = st.balancer.balance(space.tree, space.bounds, loads, retiring);
    for (const id of readyToLeave(tree, space.bounds, retiring, loads)) {
      const without = removeCell(tree, id);
      if (!without) continue;
      tree = without;
      st.retiring.delete(id);
      this.#opts.log.info(`space ${space.id}: cell ${id} has shrunk to nothing and leaves the tree`);
    }
    if (!balancing || tree !== space.tree) return tree;
    const plan = { ...DEFAULT_CELL_PLAN, ...this.#opts.plan };
    if (st.cooldown > 0) st.cooldown--;
    const apps = this.#host.cellapps().filter((m) => !this.draining.has(m.id)).map((m) => ({ id: m.id, load: m.load }));
    const add = st.cooldown === 0 ? planAdd(tree, space.bounds, loads, apps, retiring, plan) : null;
    if (add) {
      st.cooldown = ADD_COOLDOWN;
      return this.#withNewCell(space, add.split, add.cellapp);
    }
    // The cells an operator asked for stay; those balancing added go again when idle.
    const retire = cells.length > space.minCells ? planRetire(tree, loads, retiring, plan) : null;
    if (retire !== null) {
      st.retiring.add(retire);
      this.#opts.log.info(`space ${space.id}: cell ${retire} is idle and retires`);
    }
    return tree;
  }

  #withNewCell(space: Space, split: number, cellapp: number): BspNode {
    const id = Math.max(...space.cells().map((c) => c.id)) + 1;
    this.#opts.log.info(
      `space ${space.id}: cell ${split} is split; new cell ${id} on cellapp ${cellapp} grows from zero`,
    );
    return addCell(space.tree, space.bounds, split, { id, cellapp });
  }

  /** The least loaded live cellapp that is not draining and runs no cell of `space`. */
  #spareCellApp(space: Space): Member | undefined {
    const used = new Set(space.cellapps());
    return this.#host.cellapps().filter((m) => !this.draining.has(m.id) && !used.has(m.id))
      .sort((a, b) => a.load - b.load || a.id - b.id)[0];
  }

  #retiringOf(space: Space, st: SpaceState): Set<number> {
    const ids = new Set(st.retiring);
    for (const c of space.cells()) if (this.draining.has(c.cellapp)) ids.add(c.id);
    return ids;
  }

  #loadsOf(space: Space): Map<number, CellLoad> {
    const loads = new Map<number, CellLoad>();
    for (const c of space.cells()) {
      // A cell that has not reported yet is left out: no cell is added or retired on a guess.
      const r = this.#host.report(space.id, c.id);
      // The entities' own CPU when reported: the entity-bound levels are fractions of it, and the moves follow them.
      if (r) loads.set(c.id, { load: r.entityLoad ?? r.load, reals: r.reals, bounds: r.entityBounds });
    }
    return loads;
  }

  #record(space: Space, st: SpaceState, loads: Map<number, CellLoad>, t: number): void {
    st.history.push({
      t,
      partitions: partitionsOf(space.tree),
      cells: space.cells().map((c) => ({
        id: c.id,
        cellapp: c.cellapp,
        load: loadOf(loads, c.id),
        reals: loads.get(c.id)?.reals ?? 0,
      })),
    });
    if (st.history.length > HISTORY) st.history.splice(0, st.history.length - HISTORY);
  }

  #stateOf(space: Space): SpaceState {
    let st = this.#state.get(space.id);
    if (!st) {
      st = {
        balancer: new SpaceBalancer({ ...DEFAULT_BALANCE, minWidth: this.#opts.minWidth }),
        enabled: space.balance,
        retiring: new Set(),
        history: [],
        busy: false,
        cooldown: 0,
      };
      this.#state.set(space.id, st);
    }
    return st;
  }
}

function loadOf(loads: ReadonlyMap<number, CellLoad>, id: number): number {
  return loads.get(id)?.load ?? 0;
}

/** The partitions of a tree, root first. */
export function partitionsOf(tree: BspNode): PartitionView[] {
  const out: PartitionView[] = [];
  const walk = (n: BspNode): number[] => {
    if (isCell(n)) return [n.cell.id];
    const view: PartitionView = { axis: n.axis, at: n.at, left: [], right: [] };
    out.push(view);
    view.left = walk(n.left);
    view.right = walk(n.right);
    return [...view.left, ...view.right];
  };
  walk(tree);
  return out;
}
