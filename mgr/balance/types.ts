/**
 * What the load balancer of a space works from and with (docs/architecture.md, "Balancing"):
 * the figures each cell reports, and the knobs an operator sets. The
 * algorithm (partition.ts, cells.ts) is pure: the cellappmgr's balancer
 * (balancer.ts) feeds it the latest reports each balance period and sends the
 * tree it returns to the space's cellapps.
 */
import type { EntityBounds } from "../../core/wire/mod.ts";

/** One cell's latest figures, as the balancer reads them. */
export interface CellLoad {
  /** The cell's share of its cellapp's time (a share of one core), smoothed. */
  load: number;
  /** Reals in the cell. */
  reals: number;
  /** Where its entity load lies; absent until the cell has reported. */
  bounds?: EntityBounds;
}

/** How a space is balanced. */
export interface BalanceOptions {
  /**
   * No cell (other than one growing from or shrinking to zero) becomes narrower than this (m). The ghost radius is
   * no floor: as in BigWorld a cell may be narrower, and its reals are then ghosted to every cell within the radius.
   */
  minWidth: number;
  /** The most a partition moves in one balance period (m). */
  maxStep: number;
  /** Load differences per cell below this (a share of a core) move nothing. */
  deadband: number;
  /** Nor do differences below this fraction of the mean load per cell: measurement noise at any load. */
  tolerance: number;
  /** Aggression a partition starts with; it grows while it keeps moving one way and shrinks when it turns. */
  aggression: number;
  /** Bounds of the aggression. */
  minAggression: number;
  maxAggression: number;
}

/** The cellappmgr's default minWidth (m): wide enough that a cell is never degenerate, far below any AoI. */
export const DEFAULT_MIN_CELL_WIDTH = 10;

/** Defaults for a balance period of 1 s. */
export const DEFAULT_BALANCE: BalanceOptions = {
  minWidth: 0,
  maxStep: 50,
  deadband: 0.002,
  tolerance: 0.1,
  aggression: 1,
  minAggression: 0.1,
  maxAggression: 2,
};
