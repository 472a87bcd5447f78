/**
 * Byte helpers below both core/def and core/wire: the little-endian ByteWriter and ByteReader, the bounded msgpack
 * scan that every decoded msgpack body passes first, and the entity-id limit both formats check.
 */
export * from "./bytes.ts";
export * from "./msgpack_limits.ts";
export { COST, SHORT_STRING } from "./msgpack_cost.ts";
export * from "./ids.ts";
export * from "./copy.ts";
