/**
 * Entity definitions only (`@seamless/server/defs`): what a game's definitions module imports so that both its
 * server (through `@seamless/server`) and its browser page (bundled with `@seamless/server/client`) can use it.
 * Nothing here imports a `node:` module or starts a server. See docs/game.md, "A game in its own repository".
 *
 * @module
 */
export {
  ByteReader,
  ByteWriter,
  createRegistry,
  defineEntity,
  EntityRegistry,
  EntityType,
  AUDIENCES,
  FLAGS,
  T,
  TypeTable,
} from "./core/def/mod.ts";
export type {
  ArgDef,
  ArgSpec,
  Audience,
  DefContext,
  DefWarning,
  LodLevel,
  MethodDef,
  MethodKind,
  PropertyDef,
  TypeKind,
  UserTypeImpl,
  ComponentSpec,
  DataType,
  EntitySpec,
  Flag,
  LodLevelSpec,
  MethodSpec,
  PropertySpec,
  PropertyValues,
  RegistryInput,
  SourcePos,
  TypeRef,
  ValueOf,
  VolatileLod,
  VolatileSpec,
} from "./core/def/mod.ts";
