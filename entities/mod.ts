/**
 * The game's entity types. `registry` is what every role and the client SDK
 * load; definitions are data, scripts live beside them in later modules.
 */
import { createRegistry, EntityRegistry, PropertyValues } from "../core/def/mod.ts";
import { Account } from "./account.ts";
import { Avatar, InventoryItem } from "./avatar.ts";
import { NPC } from "./npc.ts";
import { NPCCell } from "./npc_cell.ts";
import { AvatarCell } from "./avatar_cell.ts";
import { Guild } from "./guild.ts";
import { AvatarBase } from "./avatar_base.ts";
import { AccountBase } from "./account_base.ts";
import { GuildBase } from "./guild_base.ts";
import { Dungeon } from "./dungeon.ts";
import { DungeonBase } from "./dungeon_base.ts";
import { DungeonCell } from "./dungeon_cell.ts";
import type { CellScriptClass } from "../core/script.ts";
import type { BaseScriptClass, BaseScripts } from "../core/base_script.ts";
import { type PlacementHook, serverPlacement } from "../core/placement.ts";
import { defineGame, type Game } from "../core/game.ts";

export { Account, Avatar, Dungeon, Guild, InventoryItem, NPC };

/** The sample types, ids in this order: Account 0, Avatar 1, NPC 2, Guild 3, Dungeon 4. */
export const registry: EntityRegistry = createRegistry({ entities: [Account, Avatar, NPC, Guild, Dungeon] });

/** Property values of an Account, by name. */
export type AccountProps = PropertyValues<typeof Account>;
/** Property values of an Avatar, by name. */
export type AvatarProps = PropertyValues<typeof Avatar>;
/** Property values of a Guild, by name. */
export type GuildProps = PropertyValues<typeof Guild>;
/** Property values of a Dungeon, by name. */
export type DungeonProps = PropertyValues<typeof Dungeon>;
/** Property values of an NPC, by name. */
export type NPCProps = PropertyValues<typeof NPC>;

/** Cell behaviour by entity type name; a type without one has no script. */
export const cellScripts: Readonly<Record<string, CellScriptClass>> = {
  NPC: NPCCell,
  Avatar: AvatarCell,
  Dungeon: DungeonCell,
};

/** Base behaviour by entity type name (the baseapps run these); a type without one has no base script. */
export const baseScripts: Readonly<Record<string, BaseScriptClass>> = {
  Account: AccountBase,
  Avatar: AvatarBase,
  Guild: GuildBase,
  Dungeon: DungeonBase,
};

/**
 * Where a player appears at login: this game lets the server decide (the
 * saved place, else the default space's spawn point), whatever the client
 * asks for; a game that lets players pick a realm or make an instance says
 * so here.
 */
export const placement: PlacementHook = serverPlacement;

/** The sample game: what the server runs without --game. */
export const game: Game<BaseScripts> = defineGame<BaseScripts>({
  name: "sample",
  registry,
  cellScripts,
  baseScripts,
  playerType: "Avatar",
  placement,
  // The operator's --npcs wander the default space.
  spaceCreated: (space) => space.isDefault && space.npcs > 0 ? [{ type: "NPC", count: space.npcs }] : [],
});
