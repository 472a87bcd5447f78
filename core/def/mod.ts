/**
 * Entity definitions and the property system: types, flags and audiences, the
 * registry, the BigWorld/KBEngine .def loader, run-time property containers
 * with change paths, and the per-audience encoders.
 */
export * from "./errors.ts";
export { ByteReader, ByteWriter } from "../bytes/mod.ts";
export * from "./flags.ts";
export * from "./types.ts";
export * from "./compound.ts";
export * from "./builtins.ts";
export * from "./schema.ts";
export * from "./model.ts";
export * from "./type_table.ts";
export * from "./build.ts";
export * from "./loader.ts";
export * from "./paths.ts";
export * from "./container.ts";
export type { TrackOwner } from "./tracked.ts";
export * from "./history.ts";
export * from "./codec.ts";
export { parseXml } from "./xml.ts";
export type { XmlElement } from "./xml.ts";
export * from "./describe.ts";
export * from "./compat.ts";
export { MAX_ENTITY_ID } from "../bytes/mod.ts";
