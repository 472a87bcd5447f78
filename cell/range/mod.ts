/**
 * The range list (docs/architecture.md, "The witness"): entities and trigger bounds kept sorted along X
 * and Z, shuffled as they move, firing enter and leave as bounds cross.
 */
export { RangeList } from "./range_list.ts";
export { RANGE_FLAG_AOI, RANGE_FLAG_SCRIPT, RANGE_FLAGS_ENTITY, type RangeEntity, RangeNode } from "./range_node.ts";
export { type RangeHandler, RangeTrigger, type RangeTriggerOptions } from "./range_node.ts";
