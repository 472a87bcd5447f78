/**
 * Entity definitions only (`@seamless/server/defs`): what a game's definitions module imports so that both its
 * server (through `@seamless/server`) and its browser page (bundled with `@seamless/server/client`) can use it.
 * Nothing here imports a `node:` module or starts a server. See docs/game.md, "A game in its own repository".
 *
 * @module
 */
export {
  AUDIENCES,
  ByteReader,
  ByteWriter,
  createRegistry,
  defineEntity,
  EntityRegistry,
  EntityType,
  FLAGS,
  T,
  TypeTable,
} from "./core/def/mod.ts";
export type {
  ArgDef,
  ArgSpec,
  Audience,
  ComponentSpec,
  DataType,
  DefContext,
  DefWarning,
  EntitySpec,
  Flag,
  LodLevel,
  LodLevelSpec,
  MethodDef,
  MethodKind,
  MethodSpec,
  PropertyDef,
  PropertySpec,
  PropertyValues,
  RegistryInput,
  SourcePos,
  TypeKind,
  TypeRef,
  UserTypeImpl,
  ValueOf,
  VolatileLod,
  VolatileSpec,
} from "./core/def/mod.ts";
