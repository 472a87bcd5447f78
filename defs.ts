/**
 * Entity definitions only (`@seamless/server/defs`): what a game's definitions module imports so that both its
 * server (through `@seamless/server`) and its browser page (bundled with `@seamless/server/client`) can use it.
 * Nothing here imports a `node:` module or starts a server. See docs/game.md, "A game in its own repository".
 */
export { createRegistry, defineEntity, EntityRegistry, T } from "./core/def/mod.ts";
export type { EntitySpec, PropertyValues, RegistryInput } from "./core/def/mod.ts";
