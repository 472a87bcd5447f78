/**
 * Where an entity keeps what witnesses read of it each time they send it: its newest event number, position,
 * direction, and whether it is destroyed or on the ground, in one contiguous row per entity object (a real, a
 * ghost). The entity's own fields are accessors over its row (cell/entity.ts), so a row is never stale and a move
 * writes numbers into a typed array rather than into boxed doubles.
 *
 * An entity in ten AoIs is sent up to ten times a tick; read from the entity object, each field would be a cache
 * miss of its own (every number field is a separate heap box). The rows of all entities lie side by side in one
 * array, which the witnesses' walk reads (docs/architecture.md, "The witness").
 */
import { type RowScratch, scratch } from "../../core/scratch.ts";

/** Numbers per row. */
export const ROW = 8;
/** Offsets in a row: the newest event number of the entity's history (1 until it has one). */
export const R_SEQ = 0;
/** R_DESTROYED and R_ON_GROUND bits. */
export const R_STATE = 1;
/** Position and direction. */
export const R_X = 2, R_Y = 3, R_Z = 4, R_YAW = 5, R_PITCH = 6, R_ROLL = 7;
/** Bits of R_STATE. */
export const R_DESTROYED = 1, R_ON_GROUND = 2;

/**
 * The rows (indexed by an entity's `row`, a multiple of ROW): process scratch (core/scratch.ts), which also keeps
 * which rows are used and free. `rows.a` is replaced when it grows, so read it afresh rather than keep it.
 */
export const rows: RowScratch = scratch.rows;

/** A zeroed row for a new entity (`owner`), its event number 1; freed when the entity is collected. */
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
  rows.a[r + R_SEQ] = 1;
  rows.registry.register(owner, r);
  return r;
}

/** Sets or clears a bit of row `r`'s R_STATE. */
export function setRowBit(r: number, bit: number, on: boolean): void {
  const a = rows.a, v = a[r + R_STATE];
  a[r + R_STATE] = on ? v | bit : v & ~bit;
}
