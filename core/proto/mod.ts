/**
 * The client protocol (docs/protocol.md, "Client protocol"), declared as data: each message's name, code and fields
 * in one table (session.ts for codes 1-31, aoi.ts for 32-95), from which its encoding, decoding, checks and types
 * come (declare.ts, fields.ts). Method arguments: args.ts.
 */
export * from "./errors.ts";
export * from "./declare.ts";
export * as fields from "./fields.ts";
export { type Vec3Tuple, writePose } from "./fields.ts";
export * from "./session.ts";
export * from "./aoi.ts";
export * from "./aoi_write.ts";
export * from "./args.ts";
