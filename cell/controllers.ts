/**
 * Controllers: timers and movement attached to an entity, run by
 * its cell each tick, destroyed with it, and serialisable so they travel with
 * the entity to another cell.
 */
import type { Vec3 } from "../core/script.ts";

/** A controller's serialised form; times are relative, so clocks need not agree. */
export type ControllerState =
  | { kind: "timer"; id: number; dueInMs: number; repeatMs: number; userArg: number }
  | { kind: "moveToPoint"; id: number; dest: Vec3; speed: number; faceMovement: boolean; userArg: number }
  | {
    kind: "moveToEntity";
    id: number;
    targetId: number;
    speed: number;
    range: number;
    faceMovement: boolean;
    userArg: number;
  }
  | { kind: "rangeTrigger"; id: number; radius: number; userArg: number }
  | Navigation;

/**
 * A walk along a navigation mesh (cell/nav/): the corners still ahead, the next first, the target's point on the mesh
 * last. It carries its path, so the cell it moves to or is restored in walks on without asking its own mesh.
 */
export interface Navigation {
  kind: "navigate";
  id: number;
  /** The target as the script gave it. */
  dest: Vec3;
  path: Vec3[];
  speed: number;
  faceMovement: boolean;
  userArg: number;
  /** Why no path was found: the controller fails (onMoveFailed) at the next tick instead of walking. */
  failed?: string;
}

/** A timer in its cell's heap. */
export interface Timer {
  ownerId: number;
  id: number;
  /** Cell time (ms) when it fires next. */
  due: number;
  repeatMs: number;
  userArg: number;
  cancelled: boolean;
}

/** The movement an entity is doing, at most one at a time. */
export type Movement =
  | { kind: "moveToPoint"; id: number; dest: Vec3; speed: number; faceMovement: boolean; userArg: number }
  | {
    kind: "moveToEntity";
    id: number;
    targetId: number;
    speed: number;
    range: number;
    faceMovement: boolean;
    userArg: number;
  }
  | Navigation;

/**
 * A binary min-heap of timers by due time. Cancelled timers stay until they
 * reach the top (cancel is O(1)); the cell drops them there.
 */
export class TimerHeap {
  readonly items: Timer[] = [];

  /** Number of timers held, cancelled ones included. */
  get size(): number {
    return this.items.length;
  }

  /** The earliest timer, or undefined. */
  peek(): Timer | undefined {
    return this.items[0];
  }

  push(t: Timer): void {
    const a = this.items;
    a.push(t);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (a[p].due <= t.due) break;
      a[i] = a[p];
      i = p;
    }
    a[i] = t;
  }

  pop(): Timer | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last) {
      let i = 0;
      const n = a.length;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const c = r < n && a[r].due < a[l].due ? r : l;
        if (a[c].due >= last.due) break;
        a[i] = a[c];
        i = c;
      }
      a[i] = last;
    }
    return top;
  }
}
