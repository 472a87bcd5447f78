/** The cellapp role: cells, real and ghost entities, AOI, witnesses, offloading. */
export { CellApp, type CellAppGame, DEFAULT_TICK_HZ } from "./cellapp.ts";
export { Cell } from "./cell.ts";
export type { CellHost } from "./cell_host.ts";
export { Entity, type EntityHost, type EntityState } from "./entity.ts";
export {
  RANGE_FLAG_AOI,
  RANGE_FLAG_SCRIPT,
  RANGE_FLAGS_ENTITY,
  type RangeEntity,
  type RangeHandler,
  RangeList,
  RangeNode,
  RangeTrigger,
  type RangeTriggerOptions,
} from "./range/mod.ts";
export {
  configureSpaceAoI,
  updateWitnesses,
  Witness,
  WITNESS_DEFAULTS,
  witnessesOf,
  witnessOf,
  type WitnessOptions,
} from "./witness/mod.ts";
export { clientsOf, EventHistory, historyOf } from "./witness/mod.ts";
