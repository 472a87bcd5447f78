/**
 * The balance benchmark's game (run with --game): the sample game, so that bots log in as its Avatars, with the
 * test game's Marchers, a crowd that gathers in one place and then walks to another.
 */
import { createRegistry, type EntityRegistry } from "../../core/def/mod.ts";
import type { BaseScripts } from "../../core/base_script.ts";
import { defineGame, type Game } from "../../core/game.ts";
import { Account, Avatar, game as sample, Guild, NPC } from "../../entities/mod.ts";
import { Marcher, MarcherCell } from "../../testing/games/walkers.ts";

/** The sample types followed by Marcher: what the bots' SDK decodes with. */
export const registry: EntityRegistry = createRegistry({ entities: [Account, Avatar, NPC, Guild, Marcher] });

/** The game. */
export const game: Game<BaseScripts> = defineGame<BaseScripts>({
  ...sample,
  name: "crowd",
  registry,
  cellScripts: { ...sample.cellScripts, Marcher: MarcherCell },
});
