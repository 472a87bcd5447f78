/**
 * The controllers of a cell's reals, run each tick: its timer heap, the reals moving and the reals with
 * an onTick; and the script range triggers. Each real is charged the CPU of its own (cell/load/).
 */
import { type ControllerState, type Movement, type Navigation, type Timer, TimerHeap } from "./controllers.ts";
import type { Entity } from "./entity.ts";
import { enterLoop, leaveEntity, switchEntity } from "./load/entity_load.ts";
import { RANGE_FLAG_SCRIPT, type RangeList } from "./range/mod.ts";
import { callScript, type ScriptCell } from "./script_calls.ts";
import { walkPath, type WalkStep } from "./nav/mod.ts";

/** What the controllers need of their cell. */
export interface ControllerCell extends ScriptCell {
  /** The cell's clock (ms), advanced by ticks. */
  readonly time: number;
  /** Reals of the cell. */
  readonly entities: ReadonlyMap<number, Entity>;
  /** Ghosts held by the cell, which a movement may follow. */
  readonly ghosts: ReadonlyMap<number, Entity>;
  readonly rangeList: RangeList;
  /** Moves an entity; the range list fires what the move crossed. */
  moveEntity(e: Entity, x: number, y: number, z: number): void;
}

/** The timers, movements, onTicks and script range triggers of one cell's reals. */
export class CellControllers {
  readonly #cell: ControllerCell;
  readonly #timers = new TimerHeap();
  readonly #movers = new Set<Entity>();
  readonly #tickers = new Set<Entity>();
  /** Where a navigating real's tick ends, reused for every walker. */
  readonly #step: WalkStep = { x: 0, y: 0, z: 0, dx: 0, dz: 0 };

  constructor(cell: ControllerCell) {
    this.#cell = cell;
  }

  /** One tick at cell time `now`: the timers that are due, the movements, then scripts' onTick. */
  run(now: number, dtMs: number): void {
    const heap = this.#timers;
    const frozen: Timer[] = [];
    enterLoop();
    try {
      this.#run(now, dtMs, heap, frozen);
    } finally {
      leaveEntity();
    }
    for (const t of frozen) heap.push(t);
  }

  #run(now: number, dtMs: number, heap: TimerHeap, frozen: Timer[]): void {
    const cell = this.#cell;
    for (let t = heap.peek(); t !== undefined && t.due <= now; t = heap.peek()) {
      heap.pop();
      if (t.cancelled) continue;
      const e = cell.entities.get(t.ownerId);
      if (!e) continue;
      if (e.offloading) {
        // Its state went with the transfer; it fires here only if the transfer fails.
        frozen.push(t);
        continue;
      }
      if (t.repeatMs > 0) {
        // One firing per tick at most; a timer that fell behind does not fire in a burst.
        t.due = Math.max(t.due + t.repeatMs, now + 1e-6);
        heap.push(t);
      } else {
        e.timers.delete(t.id);
      }
      switchEntity(e);
      callScript(cell, e, "onTimer", t.id, t.userArg);
    }
    const dt = dtMs / 1000;
    for (const e of this.#movers) {
      if (e.offloading) continue;
      switchEntity(e);
      this.#advance(cell, e, dt);
    }
    for (const e of this.#tickers) {
      switchEntity(e);
      callScript(cell, e, "onTick", dt);
    }
  }

  /** Moves `e` one tick along its movement; no allocation, as it runs per mover per tick. */
  #advance(cell: ControllerCell, e: Entity, dt: number): void {
    const m = e.movement;
    if (!m || e.destroyed) {
      this.#movers.delete(e);
      return;
    }
    if (m.kind === "navigate") return this.#walk(cell, e, m, dt);
    let tx: number, ty: number, tz: number;
    let range = 0;
    if (m.kind === "moveToPoint") {
      tx = m.dest.x;
      ty = m.dest.y;
      tz = m.dest.z;
    } else {
      // A target in a neighbouring cell is followed through its ghost here.
      const target = cell.entities.get(m.targetId) ?? cell.ghosts.get(m.targetId);
      if (!target) {
        // The target is gone from this cell's view (destroyed, or beyond the ghost area): the movement ends.
        e.movement = null;
        this.#movers.delete(e);
        return;
      }
      tx = target.x;
      ty = target.y;
      tz = target.z;
      range = m.range;
    }
    const dx = tx - e.x;
    const dz = tz - e.z;
    const dist = Math.sqrt(dx * dx + dz * dz);
    let arrived = dist <= range;
    if (!arrived) {
      // Aim at the point `range` short of the target, on the line towards it.
      const goal = dist - range;
      const step = m.speed * dt;
      arrived = step >= goal;
      const f = arrived ? goal / dist : step / dist;
      if (m.faceMovement) e.yaw = Math.atan2(dx, dz);
      const ny = range === 0 && arrived ? ty : e.y + (ty - e.y) * Math.min(1, f);
      cell.moveEntity(e, arrived && range === 0 ? tx : e.x + dx * f, ny, arrived && range === 0 ? tz : e.z + dz * f);
    }
    if (arrived && e.movement === m) {
      e.movement = null;
      this.#movers.delete(e);
      callScript(cell, e, "onMove", m.id, m.userArg);
    }
  }

  /** Walks `e` one tick along its navigation path; a navigation that found no path fails here, with its reason. */
  #walk(cell: ControllerCell, e: Entity, m: Navigation, dt: number): void {
    if (m.failed !== undefined) {
      e.movement = null;
      this.#movers.delete(e);
      callScript(cell, e, "onMoveFailed", m.id, m.failed, m.userArg);
      return;
    }
    const s = this.#step;
    const arrived = walkPath(e, m.path, m.speed * dt, s);
    if (m.faceMovement && (s.dx !== 0 || s.dz !== 0)) e.yaw = Math.atan2(s.dx, s.dz);
    cell.moveEntity(e, s.x, s.y, s.z);
    if (arrived && e.movement === m) {
      e.movement = null;
      this.#movers.delete(e);
      callScript(cell, e, "onMove", m.id, m.userArg);
    }
  }

  /** Adds a timer of `e` firing after `initialMs`, then every `repeatMs` (0: once); returns its id. */
  addTimer(e: Entity, initialMs: number, repeatMs: number, userArg: number): number {
    if (!(initialMs >= 0) || !(repeatMs >= 0)) throw new Error(`addTimer: times must be >= 0 (entity ${e.id})`);
    const id = e.nextControllerId++;
    this.#pushTimer(e, id, this.#cell.time + initialMs, repeatMs, userArg);
    return id;
  }

  #pushTimer(e: Entity, id: number, due: number, repeatMs: number, userArg: number): void {
    const t: Timer = { ownerId: e.id, id, due, repeatMs, userArg, cancelled: false };
    e.timers.set(id, t);
    this.#timers.push(t);
  }

  /** Starts a movement, replacing the one running (an entity moves one way at a time). */
  startMovement(e: Entity, m: Movement): number {
    if (!(m.speed > 0) || !Number.isFinite(m.speed)) throw new Error(`${m.kind}: speed must be > 0 (entity ${e.id})`);
    e.movement = m;
    this.#movers.add(e);
    return m.id;
  }

  /** A script range trigger: onEnteredRange/onLeftRange as entities cross the circle of `radius`. */
  addScriptTrigger(e: Entity, id: number, radius: number, userArg: number): number {
    const cell = this.#cell;
    const trigger = cell.rangeList.addTrigger(e, radius, {
      onEnter: (other: unknown) => callScript(cell, e, "onEnteredRange", id, other, userArg),
      onLeave: (other: unknown) => callScript(cell, e, "onLeftRange", id, other, userArg),
    }, { shape: "circle", wants: RANGE_FLAG_SCRIPT });
    e.triggers.set(id, { id, radius, userArg, remove: () => trigger.remove() });
    return id;
  }

  /** Cancels controller `id` of `e` (a timer, its movement or a range trigger); an unknown id is ignored. */
  cancel(e: Entity, id: number): void {
    const t = e.timers.get(id);
    if (t) {
      t.cancelled = true;
      e.timers.delete(id);
      return;
    }
    if (e.movement?.id === id) {
      e.movement = null;
      this.#movers.delete(e);
      return;
    }
    const trig = e.triggers.get(id);
    if (trig) {
      trig.remove();
      e.triggers.delete(id);
    }
  }

  /** Re-creates `e`'s timers, movement and triggers from their serialised form. */
  restore(e: Entity, controllers: readonly ControllerState[]): void {
    for (const c of controllers) {
      if (c.kind === "timer") this.#pushTimer(e, c.id, this.#cell.time + c.dueInMs, c.repeatMs, c.userArg);
      else if (c.kind === "rangeTrigger") this.addScriptTrigger(e, c.id, c.radius, c.userArg);
      else if (c.kind === "navigate") this.startMovement(e, { ...c, path: c.path.map((p) => ({ ...p })) });
      else this.startMovement(e, { ...c });
    }
  }

  /** Calls onTick of `e` each tick from now on, if its script has one. */
  tickScript(e: Entity): void {
    if (e.script?.onTick) this.#tickers.add(e);
  }

  /** Cancels every timer of `e`. */
  cancelTimers(e: Entity): void {
    for (const t of e.timers.values()) t.cancelled = true;
    e.timers.clear();
  }

  /** Removes every script range trigger of `e`. */
  removeTriggers(e: Entity): void {
    for (const t of e.triggers.values()) t.remove();
    e.triggers.clear();
  }

  /** Takes `e` out of the tick (its movement and onTick) while it is handed to another cell, or gone. */
  pause(e: Entity): void {
    this.#movers.delete(e);
    this.#tickers.delete(e);
  }

  /** Puts `e` back into the tick after a hand-over failed. */
  resume(e: Entity): void {
    if (e.movement) this.#movers.add(e);
    if (e.script?.onTick) this.#tickers.add(e);
  }
}
