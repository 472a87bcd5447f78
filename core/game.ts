/**
 * A game as the server runs it: its entity types, their scripts and the
 * hooks where the game decides (who logs in, where a player enters the world,
 * what a new space holds). A game module exports one (`defineGame`); every
 * role loads it from `--game` (cli/game.ts), and cell/, base/ and mgr/ are
 * handed the parts they need, never the module.
 *
 * Base scripts are typed by the module that runs them (base/), so here they
 * are a type parameter: the framework's root mod.ts fixes it.
 */
import type { EntityRegistry } from "./def/mod.ts";
import type { CellScriptClass } from "./script.ts";
import type { PlacementHook } from "./placement.ts";
import type { Rect } from "./geo/mod.ts";

/** One login attempt as a game's login check sees it. */
export interface LoginAttemptInfo {
  /** The account name the client gave. */
  name: string;
  /** The password it gave, not yet checked. */
  password: string;
  /** The client's address, HOST:PORT. */
  remote: string;
}

/** A game's own login rule, run before the password check: a reason to refuse, or null to go on. */
export type LoginHook = (attempt: LoginAttemptInfo) => string | null | Promise<string | null>;

/** A space the cellappmgr has just made (not one re-made from backups). */
export interface SpaceCreatedInfo {
  /** The space's area on the ground (X and Z, metres). */
  bounds: Rect;
  /** The default space, made when the first cellapp joins. */
  isDefault: boolean;
  /** The `--npcs` setting: how many NPCs the operator asked for in the default space (0 elsewhere). */
  npcs: number;
}

/** Entities to create in a new space, spread over its area. */
export interface SpaceEntities {
  /** The entity type's name. */
  type: string;
  /** How many. */
  count: number;
  /** Property values each starts with (the type's defaults otherwise). */
  props?: Record<string, unknown>;
}

/** What a new space starts with: the entities a game puts in it. */
export type SpaceCreatedHook = (space: SpaceCreatedInfo) => SpaceEntities[];

/** A space about to be made, as the game's spaceGeometry hook sees it. */
export interface SpaceGeometryInfo {
  /** The space's area on the ground (X and Z, metres). */
  bounds: Rect;
  /** The default space, made when the first cellapp joins. */
  isDefault: boolean;
}

/**
 * The navigation geometry of a new space (docs/game.md, "Navigation"): the path of an OBJ mesh, a height field
 * (`.json`) or an exported navmesh (`.navmesh`) every cellapp can read, or null for none. A geometry given at creation
 * (POST /api/spaces `geometry`) comes first.
 */
export type SpaceGeometryHook = (space: SpaceGeometryInfo) => string | null | undefined;

/** A game: what `--game=PATH` names. `B` is the base scripts' type (BaseScripts in the root mod.ts). */
export interface Game<B = unknown> {
  /** A name for logs and errors. */
  name: string;
  /** The entity types, as createRegistry makes them. */
  registry: EntityRegistry;
  /** Cell behaviour by entity type name; a type without one has no script. */
  cellScripts?: Readonly<Record<string, CellScriptClass>>;
  /** Base behaviour by entity type name. */
  baseScripts?: B;
  /** The entity type a new account plays (default "Avatar"). */
  playerType?: string;
  /** Refuses a login before its password is checked. */
  checkLogin?: LoginHook;
  /** Where a player enters the world (default: where the server puts it). */
  placement?: PlacementHook;
  /** What a new space holds (default: nothing). */
  spaceCreated?: SpaceCreatedHook;
  /** The navigation geometry of a new space (default: none). */
  spaceGeometry?: SpaceGeometryHook;
}

/** A game that cannot be used; the message says what is wrong with it. */
export class GameError extends Error {
  /** "GameError". */
  override name = "GameError";
}

/** Checks `game` and returns it: what a game module exports. Throws GameError naming what is wrong. */
export function defineGame<B>(game: Game<B>): Game<B> {
  checkGame(game);
  return game;
}

/** Throws GameError unless `g` is a usable game: a registry, scripts and hooks of types it has. */
export function checkGame(g: unknown): asserts g is Game {
  if (g === null || typeof g !== "object") throw new GameError(`a game is an object (defineGame), not ${typeof g}`);
  const game = g as Partial<Game>;
  if (typeof game.name !== "string" || game.name === "") throw new GameError(`the game has no name`);
  const reg = game.registry as Partial<EntityRegistry> | undefined;
  if (!reg || !Array.isArray(reg.types) || typeof reg.find !== "function") {
    throw new GameError(`game ${game.name}: "registry" is not an entity registry (make it with createRegistry)`);
  }
  if (reg.types.length === 0) throw new GameError(`game ${game.name}: the registry has no entity types`);
  const registry = reg as EntityRegistry;
  for (const [type, script] of Object.entries(game.cellScripts ?? {})) {
    const t = registry.find(type);
    if (!t) throw new GameError(`game ${game.name}: cellScripts.${type}: the registry has no type ${type}`);
    if (!t.hasCell) throw new GameError(`game ${game.name}: cellScripts.${type}: type ${type} has no cell part`);
    if (typeof script !== "function") {
      throw new GameError(`game ${game.name}: cellScripts.${type} is not a class (extend CellScript)`);
    }
  }
  const base = game.baseScripts;
  if (base !== undefined && (base === null || typeof base !== "object")) {
    throw new GameError(`game ${game.name}: "baseScripts" is not an object of scripts by type name`);
  }
  for (const type of Object.keys(base ?? {})) {
    if (!registry.find(type)) {
      throw new GameError(`game ${game.name}: baseScripts.${type}: the registry has no type ${type}`);
    }
  }
  if (game.playerType !== undefined) checkPlayerType(game as Game);
  for (const hook of ["checkLogin", "placement", "spaceCreated", "spaceGeometry"] as const) {
    if (game[hook] !== undefined && typeof game[hook] !== "function") {
      throw new GameError(`game ${game.name}: "${hook}" is not a function`);
    }
  }
}

/** The entity type a game's players play: its `playerType`, else "Avatar". */
export function playerTypeOf(game: Game<unknown>): string {
  return game.playerType ?? "Avatar";
}

/**
 * Throws GameError unless the game's player type (`playerType`, default "Avatar") is a proxy of its registry: what
 * a baseapp needs to log a client in.
 */
export function checkPlayerType(game: Game<unknown>): void {
  const name = playerTypeOf(game);
  const how = game.playerType === undefined
    ? `its player type ${name} (no playerType: the default)`
    : `playerType ${name}`;
  const t = game.registry.find(name);
  if (!t) {
    const known = game.registry.types.map((x) => x.name).join(", ");
    throw new GameError(
      `game ${game.name}: ${how} is not a type of its registry (known: ${known}); ` +
        `define the type clients play (proxy: true) and name it in playerType`,
    );
  }
  if (!t.proxy || !t.hasBase) {
    throw new GameError(
      `game ${game.name}: ${how} is not a proxy with a base part (proxy: true in its definition): clients cannot play it`,
    );
  }
}
