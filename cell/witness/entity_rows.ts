/**
 * What witnesses read of an entity each time they send it, copied into one contiguous row per entity (per event
 * history: a real, a ghost): its newest event number, position, direction, and whether it is destroyed or on the
 * ground. An entity in ten AoIs is sent up to ten times a tick; reading its object each time costs a cache miss per
 * field (every number field is a separate heap box), so the first witness to send it in a pass copies it here and
 * the others read the row.
 *
 * A row is good for one generation. The generation moves on at the start of every pass over a cell's witnesses, at
 * every witness update that is not part of such a pass, and after every script callback a witness makes (the only
 * code that may move or destroy entities in the middle of a pass), so a row never says anything else than the
 * entity's fields would.
 */
import type { Pose } from "../pose.ts";
import { type PassScratch, type RowScratch, scratch } from "../../core/scratch.ts";

/** Numbers per row. */
export const ROW = 8;
/** Offsets in a row: the newest event number (kept up to date by the history itself). */
export const R_SEQ = 0;
/** Generation * 4 + R_DESTROYED / R_ON_GROUND bits, as of the copy; below `rows.gen4` means stale. */
export const R_STATE = 1;
/** Position and direction as of the copy. */
export const R_X = 2, R_Y = 3, R_Z = 4, R_YAW = 5, R_PITCH = 6, R_ROLL = 7;
/** Bits of R_STATE - gen4. */
export const R_DESTROYED = 1, R_ON_GROUND = 2;

/**
 * The rows (indexed by a history's `row`, a multiple of ROW) and the current generation times 4: process scratch
 * (core/scratch.ts), which also keeps which rows are used and free.
 */
export const rows: RowScratch = scratch.rows;

/** A row for a new history (`owner`), freed when the history is collected. */
export function allocRow(owner: object): number {
  let r = rows.free.pop();
  if (r === undefined) {
    if (rows.used + ROW > rows.a.length) {
      const next = new Float64Array(rows.a.length * 2);
      next.set(rows.a);
      rows.a = next;
    }
    r = rows.used;
    rows.used += ROW;
  }
  rows.a.fill(0, r, r + ROW);
  rows.registry.register(owner, r);
  return r;
}

/** What a row copies of an entity. */
export interface RowSource extends Pose {
  readonly destroyed: boolean;
  readonly isOnGround: boolean;
}

/** Makes every row stale: entities may have changed since they were copied. */
export function newGeneration(): void {
  rows.gen4 += 4;
}

/** Copies `e` into row `r` for this generation; returns the row's R_STATE. */
export function refreshRow(e: RowSource, r: number): number {
  const a = rows.a;
  a[r + R_X] = e.x;
  a[r + R_Y] = e.y;
  a[r + R_Z] = e.z;
  a[r + R_YAW] = e.yaw;
  a[r + R_PITCH] = e.pitch;
  a[r + R_ROLL] = e.roll;
  return a[r + R_STATE] = rows.gen4 + (e.destroyed ? R_DESTROYED : 0) + (e.isOnGround ? R_ON_GROUND : 0);
}

/**
 * Set by a pass over a cell's witnesses just before it calls one witness's update, and taken by that update: any
 * other call of update (a test's, closeView's, one made from a script callback) starts a new generation instead.
 */
export const passToken: PassScratch = scratch.pass;
