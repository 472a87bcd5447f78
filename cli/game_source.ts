/**
 * Where a process's game comes from, and loading it again (docs/game.md#reloading-a-game). Deno caches a module by
 * its URL for the life of the process, and a query on the entry would reload only the entry, not the files it
 * imports. So each reload copies the game's folder to a sibling folder of its own (`.NAME.reload-PID-vN`): every
 * file of the game gets a new URL, while its imports outside the folder (the framework) keep theirs, so the new
 * scripts extend the very classes the server runs.
 */
import { basename, dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { errorText } from "../core/errors.ts";
import { checkGame, type Game, GameError } from "../core/game.ts";
import { GameLoadError, gamePath } from "./game.ts";

/** A game as loaded from its files, with the version its files make. */
export interface LoadedGame {
  game: Game;
  /** A hash of the game folder's files: the same files give the same version in every process. */
  version: string;
}

/** The game files of one `--game` (or the sample game), loaded again on demand. */
export class GameSource {
  /** The game's entry module, absolute. */
  readonly entry: string;
  /** The folder copied on a reload: the entry's. */
  readonly folder: string;
  #loads = 0;
  #copy: string | null = null;

  constructor(path: string | null) {
    this.entry = path === null ? fileURLToPath(new URL("../entities/mod.ts", import.meta.url)) : gamePath(path);
    this.folder = dirname(this.entry);
    globalThis.addEventListener("unload", () => this.#drop(this.#copy));
  }

  /** The version of the files as they are now. */
  version(): Promise<string> {
    return folderHash(this.folder);
  }

  /**
   * Loads the game from a fresh copy of its folder and checks it. Rejects with a GameLoadError naming the file and
   * line (of the original files) when a module cannot be loaded or throws, or what is wrong with the game.
   */
  async load(): Promise<LoadedGame> {
    const where = `--game: ${this.entry}`;
    const version = await this.version();
    const copy = join(dirname(this.folder), `.${basename(this.folder)}.reload-${Deno.pid}-v${++this.#loads}`);
    await this.#sweep();
    let mod: Record<string, unknown>;
    try {
      await copyFolder(this.folder, copy);
      mod = await import(pathToFileURL(join(copy, relative(this.folder, this.entry))).href);
    } catch (e) {
      this.#drop(copy);
      throw new GameLoadError(`${where}: cannot load the module: ${this.#place(e, copy)}`, { cause: e });
    }
    const game = mod.game ?? mod.default;
    try {
      if (game === undefined) throw new GameError("the module exports no game (export const game = defineGame({...}))");
      checkGame(game);
    } catch (e) {
      this.#drop(copy);
      throw new GameLoadError(`${where}: ${this.#place(e, copy)}`, { cause: e });
    }
    this.#drop(this.#copy);
    this.#copy = copy;
    return { game, version };
  }

  /** The error's message and where it was thrown, with the copy's paths named as the game's own files. */
  #place(e: unknown, copy: string): string {
    const own = (s: string) =>
      s.replaceAll(pathToFileURL(copy).href, pathToFileURL(this.folder).href).replaceAll(copy, this.folder);
    // deno-lint-ignore no-control-regex
    const message = own(errorText(e)).replace(/\x1b\[[0-9;]*m/g, "").split("\n").map((l) => l.trim())
      .filter((l) => l !== "").join(" ");
    const at = e instanceof Error ? e.stack?.split("\n").find((l) => l.includes(copy)) : undefined;
    const place = at?.match(/(file:\/\/[^\s)]+:\d+:\d+)/)?.[1];
    return place && !message.includes(own(place)) ? `${message} (at ${own(place)})` : message;
  }

  /**
   * Removes the copies that processes no longer running left beside the game folder (a process killed, or killed in
   * the middle of a copy, cannot remove its own). Where a process's liveness cannot be read (no /proc), none is.
   */
  async #sweep(): Promise<void> {
    const prefix = `.${basename(this.folder)}.reload-`;
    const parent = dirname(this.folder);
    try {
      for await (const e of Deno.readDir(parent)) {
        const pid = e.isDirectory && e.name.startsWith(prefix)
          ? /^(\d+)-v\d+$/.exec(e.name.slice(prefix.length))?.[1]
          : null;
        if (!pid || Number(pid) === Deno.pid || processAlive(Number(pid))) continue;
        this.#drop(join(parent, e.name));
      }
    } catch {
      // The parent folder cannot be listed: nothing to sweep that this process could reach.
    }
  }

  #drop(copy: string | null): void {
    if (copy === null) return;
    try {
      Deno.removeSync(copy, { recursive: true });
    } catch {
      // Already gone.
    }
  }
}

// A game folder's own deno.json would make the copy a second workspace member: it is left out, so the copy
// resolves bare specifiers through the workspace above it (docs/game.md#reloading-a-game).
const SKIPPED = new Set(["deno.json", "deno.jsonc", "node_modules", ".git"]);

/** Most files a game folder may hold: one with more is likely not a game's own folder (a project root). */
export const MAX_GAME_FILES = 2000;

/** Whether process `pid` runs, read from /proc; true where that cannot be told, so that nothing of it is removed. */
function processAlive(pid: number): boolean {
  if (Deno.build.os !== "linux") return true;
  try {
    Deno.statSync(`/proc/${pid}`);
    return true;
  } catch {
    return false;
  }
}

async function copyFolder(from: string, to: string, count = { files: 0 }): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) {
    if (SKIPPED.has(entry.name) || entry.name.includes(".reload-")) continue;
    const src = join(from, entry.name), dst = join(to, entry.name);
    if (entry.isDirectory) await copyFolder(src, dst, count);
    else if (entry.isFile) {
      if (++count.files > MAX_GAME_FILES) {
        throw new Error(`its folder holds more than ${MAX_GAME_FILES} files: give the game a folder of its own`);
      }
      await Deno.copyFile(src, dst);
    }
  }
}

async function folderHash(folder: string): Promise<string> {
  const parts: string[] = [];
  const walk = async (dir: string) => {
    const entries = [];
    for await (const e of Deno.readDir(dir)) entries.push(e);
    entries.sort((a, b) => a.name < b.name ? -1 : 1);
    for (const e of entries) {
      if (SKIPPED.has(e.name) || e.name.includes(".reload-")) continue;
      const path = join(dir, e.name);
      // A folder too big to be copied is hashed no further (its reloads are refused anyway).
      if (parts.length >= 2 * MAX_GAME_FILES) return;
      if (e.isDirectory) await walk(path);
      else if (e.isFile) parts.push(relative(folder, path), await Deno.readTextFile(path));
    }
  };
  await walk(folder);
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(parts.join("\0")));
  return [...new Uint8Array(digest).slice(0, 6)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
