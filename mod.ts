/**
 * The framework as a package (`@seamless/server`): what a game in its own
 * repository imports to define its entities, scripts and hooks, and to start
 * the server with itself. The client SDK is `@seamless/server/client`.
 * See docs/game.md, "A game in its own repository".
 */
import { defineGame as defineGameOf, type Game as GameOf } from "./core/game.ts";
import type { BaseScripts } from "./core/base_script.ts";

export { VERSION } from "./core/version.ts";

// Entity definitions (also alone, for browser pages: `@seamless/server/defs`).
export * from "./defs.ts";

// BigWorld and KBEngine definitions: an entities.xml with its entity_defs/, as a registry.
export { DefError, formatWarning, loadDefs } from "./core/def/mod.ts";
export type { DefWarning, LoadOptions, UserTypeImpl } from "./core/def/mod.ts";

// Cell scripts: a class per entity type, and what it sees of its entity and space.
export { CellScript } from "./core/script.ts";
export type {
  Area,
  BasePart,
  CellEntityApi,
  CellInfo,
  CellScriptClass,
  Direction,
  EntityRef,
  MoveOptions,
  SpaceInfo,
  SpaceSettings,
  SpaceSettingsView,
  Vec3,
  WitnessSettings,
} from "./core/script.ts";

// Base scripts: a class per entity type with its base methods, and what it sees of its entity.
export { BaseScript } from "./core/base_script.ts";
export type {
  BaseEntityApi,
  BaseRef,
  BaseScriptClass,
  BaseScripts,
  CellEntityPlace,
  CellEntityPlaced,
  CellPart,
  ClientOf,
  GlobalData,
  NewSpaceOptions,
} from "./core/base_script.ts";

// Where a player enters the world.
export { clientPlacement, NEW_SPACE, serverPlacement } from "./core/placement.ts";
export type { Placement, PlacementHook, PlacementPosition, PlacementRequest } from "./core/placement.ts";

// The game and its hooks.
export { GameError } from "./core/game.ts";
export type {
  /** A game whose base scripts are of type `B`: what `Game` is with `B` fixed to BaseScripts. */
  Game as GameOf,
  LoginAttemptInfo,
  LoginHook,
  SpaceCreatedHook,
  SpaceCreatedInfo,
  SpaceEntities,
  SpaceGeometryHook,
  SpaceGeometryInfo,
} from "./core/game.ts";
export type { Rect } from "./core/geo/rect.ts";

/** A game as `--game` names it: its registry, cell and base scripts, and hooks. */
export type Game = GameOf<BaseScripts>;

/** Checks a game and returns it: what a game module exports as `game`. Throws GameError naming what is wrong. */
export function defineGame(game: Game): Game {
  return defineGameOf(game);
}

// Running the server with a game: a role or the local cluster, from the command line.
export { runServer, type RunServerOptions } from "./cli/run.ts";
