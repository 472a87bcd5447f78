/**
 * What the program does with its command line: parse it, load the game, run
 * a role or the local cluster. main.ts calls it for this repository's own
 * `deno task start`; a game in its own repository calls runServer from the
 * framework's mod.ts.
 */
import { fileURLToPath } from "node:url";
import { ConfigError, parseCommand, USAGE } from "../core/config/mod.ts";
import { refusedByLocalCluster, runLocalCluster } from "./local_cluster.ts";
import { PARENT_WATCH_ENV } from "../core/process.ts";
import { formatWarning } from "../core/def/mod.ts";
import { runRole, StartError } from "./roles.ts";
import { GameLoadError, gamePath, loadGame } from "./game.ts";

/** Runs the program with `args` (flags as on the command line); resolves with its exit status. */
export async function runMain(args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseCommand(args);
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(`error: ${e.message}`);
      return 2;
    }
    throw e;
  }
  if (parsed.help) {
    console.log(USAGE);
    return 0;
  }
  const cfg = parsed.config;
  if (cfg.game !== null) cfg.game = gamePath(cfg.game);
  if (cfg.role === null) {
    const refused = refusedByLocalCluster(cfg, parsed.given);
    if (refused !== null) {
      console.error(`error: ${refused}`);
      return 2;
    }
  }
  try {
    // The local cluster loads it too: a bad game is reported here, once, before any child starts.
    const players = cfg.role === "baseapp" || (cfg.role === null && cfg.baseapps > 0);
    const game = await loadGame(cfg.game, { players });
    // Once per program: the local cluster's children leave it to their parent.
    if (Deno.env.get(PARENT_WATCH_ENV) !== "1") {
      for (const w of game.registry.warnings) console.error(`warning: ${formatWarning(w)}`);
    }
    if (cfg.role === null) return await runLocalCluster(cfg);
    await runRole(cfg, game);
    return 0;
  } catch (e) {
    if (e instanceof GameLoadError) {
      console.error(`error: ${e.message}`);
      return 2;
    }
    if (e instanceof StartError) {
      console.error(`error: ${e.message}`);
      return 1;
    }
    throw e;
  }
}

/** How a game's own program starts the server with itself. */
export interface RunServerOptions {
  /** The game module: a path or a file URL (e.g. `new URL("./mod.ts", import.meta.url)`). */
  game: string | URL;
  /** The command line (default Deno.args); a --game in it wins. */
  args?: string[];
}

/**
 * Runs a role or the local cluster with `opts.game` as `--game`, as main.ts
 * would, and exits with its status. The local cluster's children are this
 * framework's main.ts with the same --game.
 */
export async function runServer(opts: RunServerOptions): Promise<never> {
  const args = opts.args ?? Deno.args;
  const game = opts.game instanceof URL ? fileURLToPath(opts.game) : opts.game;
  const named = args.some((a) => a === "--game" || a.startsWith("--game="));
  Deno.exit(await runMain(named ? args : [...args, `--game=${game}`]));
}
