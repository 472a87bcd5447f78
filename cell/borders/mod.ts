/**
 * A cell's borders (docs/architecture.md, "Ghosts and hand-overs"): ghosts of reals near them in the
 * neighbour cells, numbered ghost batches with resync, the two-phase hand-over
 * of a real that crosses one (fenced while in flight), and ghosts frozen while
 * a dead cellapp's reals are restored.
 */
export { CellBorders } from "./borders.ts";
export {
  type CellAddress,
  GHOST_DEFAULTS,
  type GhostConfig,
  type GhostInfo,
  ghostingOf,
  ghostStateOf,
  type RealGhosting,
} from "./ghosts.ts";
export { offloadStateOf } from "./offload.ts";
export { beginHandOver, type HandOverCell, settleHandOver } from "./handover.ts";
export type { Offloading } from "./handover_fence.ts";
export { dropGhost, freezeOrphanedGhosts, isFrozen, takeOverFrozenGhost } from "./frozen_ghosts.ts";
