/**
 * Per-entity CPU (docs/architecture.md, "Balancing"): the time each real
 * costs in its script callbacks, controllers, witness update and ghost sync,
 * counted in the tick path and smoothed once a second by its cell
 * (cell_load.ts).
 *
 * Time goes into the cell's CPU array at the slot of the entity's range-list
 * node (a number in a typed array: a number stored on the entity would be
 * boxed anew at every write). The entity being charged is the top of a stack,
 * so that nested sections do not count twice: a section entered while another
 * runs (an onMove inside a movement, a range trigger's callback on another
 * entity) charges the outer entity up to that point and its own after. A loop
 * over entities switches the top from one to the next, reading the clock once
 * per entity rather than twice; a section for the entity already on top reads
 * it not at all. Nothing allocates once the stack has grown to its stack.depth.
 */
import type { Entity } from "../entity.ts";
import { NOBODY, scratch } from "../../core/scratch.ts";

/**
 * The charged slots, innermost last (each a CPU array and a slot in it), their depth, and when the top started
 * being charged: process scratch (core/scratch.ts), as the code being charged is the process's.
 */
const stack = scratch.load;
const { arrays, slots, clock } = stack;

/**
 * Starts charging `e` (pausing whatever was charged). Returns whether it
 * started a section, which the caller must then end with leaveEntity (in a
 * finally): false when `e` is already being charged, or is on no range list
 * (destroyed).
 */
export function enterEntity(e: Entity): boolean {
  const n = e.rangeNode;
  if (n === null) return false;
  const a = e.cell.loadMeter.cpuArray(n.idx);
  const d = stack.depth;
  if (d > 0 && arrays[d - 1] === a && slots[d - 1] === n.idx) return false;
  push(a, n.idx);
  return true;
}

/** Ends the section enterEntity started: its entity is charged, the one it paused resumes. */
export function leaveEntity(): void {
  const now = performance.now();
  const d = --stack.depth;
  arrays[d][slots[d]] += now - clock[0];
  arrays[d] = NOBODY;
  slots[d] = 0;
  clock[0] = now;
}

/**
 * Starts a loop over entities: each is charged from switchEntity(e) to the
 * next switch, the last until leaveEntity (in a finally).
 */
export function enterLoop(): void {
  push(NOBODY, 0);
}

/** Charges what ran since the last switch to the entity before, and starts charging `e`. */
export function switchEntity(e: Entity): void {
  const now = performance.now();
  const top = stack.depth - 1;
  arrays[top][slots[top]] += now - clock[0];
  const n = e.rangeNode;
  if (n === null) {
    arrays[top] = NOBODY;
    slots[top] = 0;
  } else {
    arrays[top] = e.cell.loadMeter.cpuArray(n.idx);
    slots[top] = n.idx;
  }
  clock[0] = now;
}

function push(a: Float64Array, slot: number): void {
  const now = performance.now();
  const d = stack.depth;
  if (d > 0) arrays[d - 1][slots[d - 1]] += now - clock[0];
  arrays[d] = a;
  slots[d] = slot;
  stack.depth = d + 1;
  clock[0] = now;
}

/** How deep sections nest now (0 between ticks): for tests. */
export function sectionDepth(): number {
  return stack.depth;
}
