/**
 * Per-entity CPU (issue 13, seed 004's load balancing): the time each real
 * costs in its script callbacks, controllers, witness update and ghost sync,
 * counted on the entity in the tick path and smoothed once a second by its
 * cell (cell_load.ts).
 *
 * The entity being charged is the top of a stack, so that nested sections do
 * not count twice: a section entered while another runs (an onMove inside a
 * movement, a range trigger's callback on another entity) charges the outer
 * entity up to that point and its own entity after. A loop over entities
 * switches the top from one entity to the next, which reads the clock once
 * per entity rather than twice; a section for the entity already on top reads
 * it not at all. Nothing allocates once the stack has grown to its depth.
 */

/** What CPU time is charged to: an entity (its `cpuMs`), or nobody. */
export interface Charged {
  /** CPU time (ms) counted since its cell last folded it into its smoothed load. */
  cpuMs: number;
}

/** What the time between sections of a loop is charged to before its first entity. */
const NOBODY: Charged = { cpuMs: 0 };

const stack: Charged[] = new Array(16).fill(NOBODY);
let depth = 0;
let since = 0;

/**
 * Starts charging `e` (pausing whatever was charged). Returns whether it
 * started a section, which the caller must then end with leaveEntity (in a
 * finally): false when `e` is already being charged.
 */
export function enterEntity(e: Charged): boolean {
  if (depth > 0 && stack[depth - 1] === e) return false;
  push(e);
  return true;
}

function push(e: Charged): void {
  const now = performance.now();
  if (depth > 0) stack[depth - 1].cpuMs += now - since;
  stack[depth++] = e;
  since = now;
}

/** Ends the section enterEntity started: its entity is charged, the one it paused resumes. */
export function leaveEntity(): void {
  const now = performance.now();
  const e = stack[--depth];
  e.cpuMs += now - since;
  stack[depth] = NOBODY;
  since = now;
}

/**
 * Starts a loop over entities: each is charged from switchEntity(e) to the
 * next switch, the last until leaveEntity (in a finally).
 */
export function enterLoop(): void {
  push(NOBODY);
}

/** Charges what ran since the last switch to the entity before, and starts charging `e`. */
export function switchEntity(e: Charged): void {
  const now = performance.now();
  stack[depth - 1].cpuMs += now - since;
  stack[depth - 1] = e;
  since = now;
}

/** How deep sections nest now (0 between ticks): for tests. */
export function sectionDepth(): number {
  return depth;
}
