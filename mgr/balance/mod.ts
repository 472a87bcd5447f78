/**
 * Load balancing of a space's cells (docs/architecture.md, "Balancing"): the pure algorithm
 * the cellappmgr's balancer runs each balance period.
 */
export { type BalanceOptions, type CellLoad, DEFAULT_BALANCE, DEFAULT_MIN_CELL_WIDTH } from "./types.ts";
export { SpaceBalancer, WIDTH_EPSILON } from "./partition.ts";
export { AGGRESSION_GROW, AGGRESSION_SHRINK, partitionKey, type PartitionState } from "./aggression.ts";
export {
  addCell,
  type AddPlan,
  type CellappLoad,
  type CellPlanOptions,
  DEFAULT_CELL_PLAN,
  planAdd,
  planRetire,
  readyToLeave,
} from "./cells.ts";
export { type BalanceHost, Balancer, type BalancerOptions, partitionsOf } from "./balancer.ts";
