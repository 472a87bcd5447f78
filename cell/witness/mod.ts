/**
 * Witnesses (docs/architecture.md, "The witness"): what a client sees of the world around its entity, under a byte
 * budget per tick, with the entity caches, the event history and the client cache round trip.
 */
export { Witness, witnessesOf, witnessOf } from "./witness.ts";
export { enableWitness } from "./witness_enable.ts";
export { configureSpaceAoI, WITNESS_DEFAULTS, type WitnessOptions } from "./witness_options.ts";
export { updateWitnesses } from "./witness_pass.ts";
export { type ClientCaller, clientsOf } from "./witness_clients.ts";
export {
  applySpaceSettings,
  setWitnessSettings,
  spaceSettingsOf,
  type WitnessSettings,
  witnessSettingsOf,
} from "./witness_settings.ts";
export {
  continueHistory,
  EventHistory,
  historyOf,
  type HistoryState,
  historyState,
  type OwnClientSink,
} from "./event_history.ts";
export type { WitnessCell } from "./host.ts";
