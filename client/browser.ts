/**
 * The SDK as browsers load it (`deno task browser` bundles this into one ES module): the client, and the
 * definition API (`defineEntity`, `T`, `createRegistry`) so that a page can describe its game's entities with the
 * very classes the client decodes them with.
 */
export * from "./mod.ts";
export { createRegistry, defineEntity, EntityRegistry, T } from "../core/def/mod.ts";
