/**
 * Loads the game a process runs: the module `--game` names, or the sample
 * game in entities/ without it. Both go through the same checks.
 */
import { errorText } from "../core/errors.ts";
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { checkGame, checkPlayerType, type Game, GameError } from "../core/game.ts";

/** A --game that cannot be used: the message names the flag and the file; the process exits with 2. */
export class GameLoadError extends Error {
  override name = "GameLoadError";
}

/** `path` made absolute against the working directory, as children of the local cluster are given it. */
export function gamePath(path: string): string {
  return isAbsolute(path) ? path : resolve(Deno.cwd(), path);
}

/**
 * Imports the game module at `path` (null: the sample game) and returns its
 * game: the `game` export, else the default export. Rejects with a
 * GameLoadError naming --game and the file; with `players`, also when the
 * game has no type its clients can play (a baseapp will run it).
 */
export async function loadGame(path: string | null, opts: { players?: boolean } = {}): Promise<Game> {
  const file = path === null ? null : gamePath(path);
  const where = file === null ? "the sample game (entities/mod.ts)" : `--game: ${file}`;
  if (file !== null) {
    let info: Deno.FileInfo;
    try {
      info = await Deno.stat(file);
    } catch (e) {
      throw new GameLoadError(`${where}: no such file`, { cause: e });
    }
    if (!info.isFile) throw new GameLoadError(`${where}: not a file (name the game's module, e.g. mod.ts)`);
  }
  let mod: Record<string, unknown>;
  try {
    // The sample's specifier is a literal so that `deno compile` bundles it.
    mod = file === null ? await import("../entities/mod.ts") : await import(pathToFileURL(file).href);
  } catch (e) {
    throw new GameLoadError(`${where}: cannot load the module: ${oneLine(errorText(e))}`, { cause: e });
  }
  const game = mod.game ?? mod.default;
  if (game === undefined) {
    throw new GameLoadError(`${where}: the module exports no game (export const game = defineGame({...}))`);
  }
  try {
    checkGame(game);
    if (opts.players) checkPlayerType(game);
  } catch (e) {
    if (e instanceof GameError) throw new GameLoadError(`${where}: ${e.message}`, { cause: e });
    throw e;
  }
  return game;
}

function oneLine(s: string): string {
  // deno-lint-ignore no-control-regex
  return s.replace(/\x1b\[[0-9;]*m/g, "").split("\n").map((l) => l.trim()).filter((l) => l !== "").join(" ");
}
